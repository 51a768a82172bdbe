//! The rendered report in a real browser: headless Chromium loads a page from
//! file://, and the test fails when the browser's console shows any message
//! (the pages' content policy turns any script or fetched resource into one)
//! or when a table has no rows. It also takes a screenshot.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use streamsuite::config::Suite;
use streamsuite::report::{self, BadLines};

/// Chromium, headless, with everything that would reach the network off.
fn chromium(profile: &Path) -> Command {
    let mut command = Command::new("chromium");
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-default-apps",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()));
    command
}

fn run(command: &mut Command) -> Result<Output, String> {
    let output = command.output().map_err(|e| {
        format!("cannot start chromium ({e}); install Debian's `chromium` package (.ci/run does)")
    })?;
    if !output.status.success() {
        return Err(format!(
            "chromium failed ({}):\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(output)
}

/// Loads `page` and returns its screenshot's path, or what is wrong with it.
fn check_page(page: &Path, screenshot: &Path) -> Result<PathBuf, String> {
    let profile = tempfile::tempdir().map_err(|e| e.to_string())?;
    let url = format!("file://{}", page.display());
    let dom = run(chromium(profile.path()).arg("--dump-dom").arg(&url))?;
    let console: Vec<String> = String::from_utf8_lossy(&dom.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    if !console.is_empty() {
        return Err(format!("console messages:\n{}", console.join("\n")));
    }
    let html = String::from_utf8_lossy(&dom.stdout);
    let tables: Vec<&str> = html.split("<table").skip(1).collect();
    if tables.is_empty() {
        return Err("the page has no table".to_string());
    }
    if let Some(empty) = tables
        .iter()
        .map(|t| t.split("</table>").next().unwrap_or(""))
        .find(|t| !t.contains("<td"))
    {
        return Err(format!("a table has no rows: <table{empty}</table>"));
    }
    run(chromium(profile.path())
        .arg("--window-size=1280,2400")
        .arg(format!("--screenshot={}", screenshot.display()))
        .arg(&url))?;
    let png = std::fs::read(screenshot).map_err(|e| format!("no screenshot: {e}"))?;
    if !png.starts_with(b"\x89PNG") || png.len() < 10_000 {
        return Err(format!("the screenshot looks blank ({} bytes)", png.len()));
    }
    Ok(screenshot.to_path_buf())
}

fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn rendered_pages_load_cleanly_from_file_urls() {
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report");
    let suite = Suite::load(&fixture.join("config/bench.yaml")).unwrap();
    let out = out_dir("report-browser");
    report::write_site(&suite, &fixture.join("results"), &out, BadLines::Fail).unwrap();
    for page in [
        "index.html",
        "stateless.html",
        "avro-etl.html",
        "avro-pipeline.html",
    ] {
        let shot = out.join(page.replace(".html", ".png"));
        match check_page(&out.join(page), &shot) {
            Ok(path) => eprintln!("screenshot: {}", path.display()),
            Err(err) => panic!("{page}: {err}"),
        }
    }
}

#[test]
fn a_page_with_a_script_or_an_empty_table_fails_the_check() {
    let out = out_dir("report-browser-broken");
    let head = r#"<!DOCTYPE html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"><title>t</title></head><body>"#;
    let check = |name: &str, body: &str| {
        let page = out.join(format!("{name}.html"));
        std::fs::write(&page, format!("{head}{body}</body></html>")).unwrap();
        check_page(&page, &out.join(format!("{name}.png"))).unwrap_err()
    };
    let err = check(
        "scripted",
        "<table><tr><td>1</td></tr></table><script>1</script>",
    );
    assert!(err.contains("Content Security Policy"), "{err}");
    let err = check("empty", "<table><tr><th>p50</th></tr></table>");
    assert!(err.contains("a table has no rows"), "{err}");
}
