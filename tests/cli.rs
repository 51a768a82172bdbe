//! The command line's own conventions: the suite's version, the helpers
//! kept out of `--help`, and shell completions. No broker is needed.

use std::process::{Command, Output};

fn suite(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_suite"))
        .args(args)
        .output()
        .expect("running suite")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_version_names_the_package_and_the_commit_it_was_built_from() {
    let out = suite(&["--version"]);
    assert!(out.status.success(), "{out:?}");
    let head = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let expected = match head {
        Some(commit) => format!("suite {} (commit {commit})\n", env!("CARGO_PKG_VERSION")),
        None => format!("suite {}\n", env!("CARGO_PKG_VERSION")),
    };
    assert_eq!(stdout(&out), expected);
}

#[test]
fn the_internal_helpers_are_hidden_from_help_yet_still_run() {
    let help = stdout(&suite(&["--help"]));
    let commands: Vec<&str> = help
        .lines()
        .filter_map(|l| l.strip_prefix("  ")?.split_whitespace().next())
        .collect();
    assert!(
        commands.contains(&"run") && commands.contains(&"completions"),
        "{help}"
    );
    assert!(
        !commands.contains(&"gendata") && !commands.contains(&"probe"),
        "{help}"
    );
    for helper in ["gendata", "probe"] {
        let out = suite(&[helper, "--help"]);
        assert!(out.status.success(), "{helper}: {out:?}");
    }
}

#[test]
fn completions_are_a_script_for_each_shell() {
    for (shell, opening) in [
        ("bash", "_suite()"),
        ("zsh", "#compdef suite"),
        ("fish", "complete -c suite"),
        ("elvish", "edit:completion:arg-completer[suite]"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let out = suite(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {out:?}");
        let script = stdout(&out);
        assert!(script.contains(opening), "{shell}: {script}");
        for command in ["regress", "completions"] {
            assert!(script.contains(command), "{shell} lacks {command}");
        }
        // The helpers `suite run` starts are offered nowhere, not even
        // after `suite help`; a flag's description may still name them.
        let offered = |helper: &str| {
            [
                format!("subcmd__{helper}"),
                format!("({helper})"),
                format!("'{helper}:"),
                format!("-a \"{helper}\""),
                format!("'{helper}'"),
                format!("cand {helper} "),
            ]
            .iter()
            .any(|form| script.contains(form.as_str()))
        };
        for helper in ["gendata", "probe"] {
            assert!(!offered(helper), "{shell} offers {helper}");
        }
        assert!(
            offered("regress"),
            "{shell}: the forms looked for are its own"
        );
    }
    let out = suite(&["completions", "tcsh"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a shell it has no script for is a usage error"
    );
}

/// `--help` ends with the exit codes; a command line that does not parse
/// exits 2 whatever the command, and the product's version has a flag of
/// its own beside the suite's `--version`.
#[test]
fn help_lists_the_exit_codes_and_a_usage_error_exits_2() {
    let help = stdout(&suite(&["--help"]));
    let codes = help.split("Exit codes:").nth(1).unwrap_or_default();
    for code in ["0", "1", "2", "3", "4", "5", "130"] {
        assert!(
            codes
                .lines()
                .any(|l| l.split_whitespace().next() == Some(code)),
            "exit code {code} missing from --help: {help}"
        );
    }
    let run_help = stdout(&suite(&["run", "--help"]));
    assert!(
        run_help.contains("--product-version <VERSION>"),
        "{run_help}"
    );
    assert!(run_help.contains("--json"), "{run_help}");
    for argv in [
        &["run", "rustpipe", "stateless", "--version", "1.0"][..],
        &["export", "stateless", "--format", "xlsx"],
        &["no-such-command"],
    ] {
        let out = suite(argv);
        assert_eq!(out.status.code(), Some(2), "{argv:?}: {out:?}");
    }
}

/// The report fixture's bench definition and results, for commands that
/// read records.
fn fixture(path: &str) -> String {
    format!(
        "{}/tests/fixtures/report/{path}",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// Each printing command, its reader gone before it writes a byte (as
/// `| head -1` leaves it once it has its line): the command ends as it would
/// have with its reader there, with no panic. A full disk is another matter:
/// an error naming standard output.
#[test]
fn a_closed_pipe_ends_every_printing_command_quietly() {
    use std::process::Stdio;
    let (config, results) = (fixture("config/bench.yaml"), fixture("results"));
    let pages = tempfile::tempdir().unwrap();
    let pages = pages.path().to_str().unwrap();
    let run_id = "20261129T101010Z-rustpipe-0001";
    let with_config = |args: &[&str]| {
        let mut argv = vec!["--config", &config];
        argv.extend_from_slice(args);
        argv.iter().map(|a| a.to_string()).collect::<Vec<_>>()
    };
    let with_records = |args: &[&str]| {
        let mut argv = with_config(args);
        argv.extend(["--results".to_string(), results.clone()]);
        argv
    };
    let commands: Vec<Vec<String>> = vec![
        with_config(&["list"]),
        with_config(&["list", "--json"]),
        with_records(&["export", "stateless", "--format", "csv"]),
        with_records(&["export", "stateless", "--format", "jsonl"]),
        with_records(&["export", "stateless", "--format", "markdown"]),
        with_records(&["export", run_id, "--format", "hgrm"]),
        with_records(&["report", "--out", pages]),
        vec!["completions".into(), "bash".into()],
        vec!["--help".into()],
    ];
    let run = |argv: &[String], out: Stdio| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_suite"))
            .args(argv)
            .stdout(out)
            .stderr(Stdio::piped())
            .spawn()
            .expect("running suite");
        // The reader goes away before the command has written anything.
        drop(child.stdout.take());
        child.wait_with_output().expect("waiting for suite")
    };
    for argv in &commands {
        let whole = run(argv, Stdio::null());
        let cut = run(argv, Stdio::piped());
        let stderr = String::from_utf8_lossy(&cut.stderr);
        assert_eq!(
            cut.status.code(),
            whole.status.code(),
            "{argv:?} with its reader gone: {stderr}"
        );
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "{argv:?}: {stderr}"
        );
    }
    let full = std::fs::File::create("/dev/full").unwrap();
    let out = run(&with_config(&["list", "--json"]), Stdio::from(full));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("error: writing to standard output"),
        "{stderr}"
    );
}
