//! The executable refuses a workload it does not run, in one line, before
//! it reads anything else or touches Kafka.

use std::process::Command;

#[test]
fn an_unknown_workload_exits_with_one_line() {
    let out = Command::new(env!("CARGO_BIN_EXE_rustpipe"))
        .env("BENCH_WORKLOAD", "windowed-highcard")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr.lines().collect::<Vec<_>>(),
        ["error: rustpipe: workload `windowed-highcard` is not implemented"]
    );
}
