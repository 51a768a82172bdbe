//! The checks of product.

use super::super::parse_yaml;
use super::*;

const PRODUCT: &str = "name: p\ndescription: d\nversion: builtin\ninstall: {kind: builtin}\n\
    start: [x]\nready: {stdout_contains: ready}\nworkloads: [stateless]\n\
    characteristics: {processing: a, engine: b, scaling: c, decode: d}\n";

#[test]
fn two_lines_of_one_delivery_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("product.yaml");
    let lines = "lines:\n  - {name: a, delivery: exactly-once, delivery_detail: x}\n  - {name: b, delivery: exactly-once, delivery_detail: y}\n";
    std::fs::write(&path, format!("{PRODUCT}{lines}")).unwrap();
    let err = Product::from_file(&path).unwrap_err().to_string();
    assert!(err.contains("more than one exactly-once line"), "{err}");
}

#[test]
fn an_unknown_delivery_names_the_line() {
    let lines = "lines:\n  - {name: a, delivery: maybe-once, delivery_detail: x}\n";
    let err = parse_yaml::<Product>(Path::new("p.yaml"), &format!("{PRODUCT}{lines}"))
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("p.yaml:10:"), "{err}");
    assert!(err.contains("maybe-once"), "{err}");
}

fn write_product(install: &str, start: &str) -> Result<Product, ConfigError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("product.yaml");
    let text = PRODUCT
        .replace("install: {kind: builtin}", install)
        .replace("start: [x]", start);
    let lines = "lines:\n  - {name: a, delivery: at-least-once, delivery_detail: x}\n";
    std::fs::write(&path, format!("{text}{lines}")).unwrap();
    Product::from_file(&path)
}

#[test]
fn each_install_kind_parses() {
    let pip = write_product(
        "install: {kind: pip, packages: [\"q=={version}\"]}",
        "start: [\"{install}/venv/bin/python\", \"{dir}/app.py\"]",
    )
    .unwrap();
    assert!(
        matches!(pip.install, Install::Pip { ref packages, .. } if packages[0] == "q=={version}")
    );
    let maven = write_product(
        "install: {kind: maven, version_property: flink.version}",
        "start: [java, -jar, \"{install}/build/app.jar\"]",
    )
    .unwrap();
    assert_eq!(maven.install.kind(), "maven");
    let cargo = write_product(
        "install: {kind: cargo, package: pipe, workspace: ../..}",
        "start: [\"{bin}\"]",
    )
    .unwrap();
    assert!(matches!(cargo.install, Install::Cargo { ref package, .. } if package == "pipe"));
    assert_eq!(cargo.cargo_source().unwrap(), cargo.dir().join("../.."));
    let binary = write_product(
        "install: {kind: binary, env: X_BIN, command: x, hint: get x}",
        "start: [sh, \"{dir}/run.sh\", \"{bin}\"]",
    )
    .unwrap();
    assert_eq!(binary.install.kind(), "binary");
}

#[test]
fn a_placeholder_the_install_lacks_is_refused() {
    let err = write_product("install: {kind: builtin}", "start: [\"{install}/x\"]")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("{install}") && err.contains("builtin"),
        "{err}"
    );
    let err = write_product(
        "install: {kind: pip, packages: [q]}",
        "start: [\"{bin}\", \"{dir}\"]",
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("{bin}"), "{err}");
    // JSON braces in an argument are not placeholders.
    write_product("install: {kind: builtin}", "start: [echo, '{\"a\": 1}']").unwrap();
}

#[test]
fn builtin_version_is_the_suites() {
    let lines = "lines:\n  - {name: a, delivery: at-least-once, delivery_detail: x}\n";
    let product: Product = parse_yaml(Path::new("p.yaml"), &format!("{PRODUCT}{lines}")).unwrap();
    assert_eq!(product.resolved_version(), env!("CARGO_PKG_VERSION"));
}

fn with_deployments(deployments: &str) -> Result<Product, ConfigError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("product.yaml");
    let lines = "lines:\n  - {name: a, delivery: at-least-once, delivery_detail: x}\n";
    std::fs::write(
        &path,
        format!("{PRODUCT}{lines}deployments:\n{deployments}"),
    )
    .unwrap();
    Product::from_file(&path)
}

#[test]
fn a_deployment_parses_with_its_roles_and_defaults() {
    let product = with_deployments(
        "  cluster:\n    summary: two members and a job\n    ports: [rest]\n    processes:\n      \
         - {role: member, count: 2, start: [m, \"{dir}\"], ready: {stdout_contains: up}}\n      \
         - {role: job, consumes: true}\n",
    )
    .unwrap();
    let cluster = product.deployment("cluster").unwrap();
    assert_eq!(cluster.processes.iter().map(|p| p.count).sum::<u32>(), 3);
    assert_eq!(cluster.consumers(), 1);
    assert_eq!(cluster.ports, ["rest"]);
    assert_eq!(
        cluster.processes[0].ready.as_ref().unwrap().stdout_contains,
        "up"
    );
    assert!(cluster.processes[1].start.is_none());
    let embedded = product.deployment(EMBEDDED).unwrap();
    assert_eq!(embedded.consumers(), 1);
    let err = product.deployment("swarm").unwrap_err();
    assert_eq!(
        err,
        "p has no deployment `swarm`; it offers embedded, cluster"
    );
}

#[test]
fn a_bad_deployment_is_refused_with_its_name() {
    let cases = [
        (
            "  embedded: {summary: s, processes: [{role: a}]}\n",
            "is the product's own `start`",
        ),
        (
            "  cluster: {summary: s, processes: []}\n",
            "must list at least one process",
        ),
        (
            "  cluster: {summary: s, processes: [{role: a}, {role: a}]}\n",
            "role of its own",
        ),
        (
            "  cluster: {summary: s, processes: [{role: task-manager}]}\n",
            "(`task-manager` is",
        ),
        (
            "  cluster: {summary: s, processes: [{role: a, count: 0}]}\n",
            "role `a` has count 0",
        ),
        (
            "  cluster: {summary: s, processes: [{role: a, start: [\"{install}\"]}]}\n",
            "uses {install}",
        ),
        (
            "  cluster: {summary: s, processes: [{role: a, start: []}]}\n",
            "empty `start`",
        ),
        (
            "  cluster: {summary: s, ports: [re-st], processes: [{role: a}]}\n",
            "port name `re-st`",
        ),
    ];
    for (yaml, expected) in cases {
        let err = with_deployments(yaml).unwrap_err().to_string();
        assert!(err.contains("`deployments."), "{err}");
        assert!(err.contains(expected), "{yaml}: {err}");
    }
    let err = with_deployments("  cluster: {summary: s, processes: [{role: a, size: 2}]}\n")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("product.yaml:") && err.contains("size"),
        "{err}"
    );
}

#[test]
fn state_is_described_for_the_products_own_workloads_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("product.yaml");
    let lines = "lines:\n  - {name: a, delivery: at-least-once, delivery_detail: x}\n";
    let with_state = |workload: &str| {
        PRODUCT.replace(
            "decode: d}",
            &format!("decode: d, state: {{{workload}: in memory}}}}"),
        )
    };
    std::fs::write(&path, format!("{}{lines}", with_state("stateless"))).unwrap();
    let product = Product::from_file(&path).unwrap();
    assert_eq!(product.characteristics.state["stateless"], "in memory");
    std::fs::write(&path, format!("{}{lines}", with_state("windowed-lowcard"))).unwrap();
    let err = Product::from_file(&path).unwrap_err().to_string();
    assert!(
        err.contains("`characteristics.state` describes `windowed-lowcard`"),
        "{err}"
    );
}
