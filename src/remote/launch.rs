//! How a process is started on a remote host: a POSIX shell there starts
//! it in a session of its own, which prints its process group before it
//! becomes the process, and then reads signal names from the SSH channel's
//! input. The group ends with the
//! connection: when the suite dies, or its ssh does, the input closes and
//! the shell kills the whole group, so nothing outlives the run there.

use std::collections::BTreeMap;
use std::path::Path;

/// The first line a remote start prints: this, then the process group.
pub const GROUP_MARKER: &str = "streamsuite-remote-group ";

/// The shell script that starts `argv` in `dir` with `environment` on the
/// remote host, as described above; its exit status is the process's.
pub fn start_script(dir: &Path, environment: &BTreeMap<String, String>, argv: &[String]) -> String {
    let assignments: Vec<String> = environment
        .iter()
        .map(|(key, value)| quote(&format!("{key}={value}")))
        .collect();
    let command: Vec<String> = argv.iter().map(|a| quote(a)).collect();
    // setsid makes the shell the leader of a new session and group (it
    // does not fork: a background job leads no group), and the shell names
    // that group before it becomes the process, so the line comes first.
    format!(
        "cd {dir} || exit 127\n\
         exec 3<&0\n\
         setsid sh -c 'echo \"{GROUP_MARKER}$$\"; exec \"$@\"' sh \
         env {assignments} {command} </dev/null &\n\
         group=$!\n\
         ( while read -r signal; do kill -s \"$signal\" -- \"-$group\"; done; \
           kill -s KILL -- \"-$group\" ) <&3 >/dev/null 2>&1 &\n\
         reader=$!\n\
         wait \"$group\"\n\
         status=$?\n\
         kill \"$reader\" 2>/dev/null\n\
         exit \"$status\"\n",
        dir = quote(&dir.to_string_lossy()),
        assignments = assignments.join(" "),
        command = command.join(" "),
    )
}

/// `text` as one word of a POSIX shell command line.
pub fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use super::*;
    use crate::process::{group_alive, isolate};

    #[test]
    fn quoting_keeps_every_character() {
        for text in ["plain", "with space", "it's", "$HOME `x` \"q\" \\ \n;|&"] {
            let out = Command::new("sh")
                .args(["-c", &format!("printf %s {}", quote(text))])
                .output()
                .unwrap();
            assert_eq!(String::from_utf8(out.stdout).unwrap(), text);
        }
    }

    /// Runs the start script in a local shell, as sshd would, with a pipe
    /// for its input; returns the shell, the input and the group.
    fn started(argv: &[&str]) -> (std::process::Child, std::process::ChildStdin, u32) {
        let dir = std::env::temp_dir();
        let environment = BTreeMap::from([("GREETING".to_string(), "it's me".to_string())]);
        let argv: Vec<String> = argv.iter().map(|a| a.to_string()).collect();
        let mut command = Command::new("sh");
        command
            .args(["-c", &start_script(&dir, &environment, &argv)])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        isolate(&mut command, true);
        let mut shell = command.spawn().unwrap();
        let input = shell.stdin.take().unwrap();
        let mut lines = BufReader::new(shell.stdout.take().unwrap()).lines();
        let first = lines.next().unwrap().unwrap();
        let group: u32 = first.strip_prefix(GROUP_MARKER).unwrap().parse().unwrap();
        // The process's own output follows on the same stream.
        assert_eq!(lines.next().unwrap().unwrap(), "hello it's me");
        (shell, input, group)
    }

    fn gone_within(group: u32, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if !group_alive(group) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    const TREE: [&str; 3] = [
        "sh",
        "-c",
        "echo hello $GREETING; sleep 30 & sleep 30; exit 4",
    ];

    #[test]
    fn a_signal_name_on_the_input_signals_the_whole_group() {
        let (mut shell, mut input, group) = started(&TREE);
        assert!(group_alive(group));
        writeln!(input, "TERM").unwrap();
        assert!(gone_within(group, Duration::from_secs(5)));
        // The shell reports the process's own end: killed by SIGTERM.
        assert_eq!(shell.wait().unwrap().code(), Some(128 + 15));
    }

    #[test]
    fn the_group_dies_when_the_input_closes() {
        let (mut shell, input, group) = started(&TREE);
        drop(input);
        assert!(gone_within(group, Duration::from_secs(5)));
        shell.wait().unwrap();
    }

    #[test]
    fn the_process_exit_status_is_the_scripts() {
        let (mut shell, _input, group) = started(&["sh", "-c", "echo hello $GREETING; exit 4"]);
        assert_eq!(shell.wait().unwrap().code(), Some(4));
        assert!(gone_within(group, Duration::from_secs(5)));
    }
}
