//! The raw layer stays cheap to build (issue 14): its only dependencies are
//! `libloading` and `once_cell`, and no procedural-macro crate (`thiserror`
//! pulled in `syn`, `quote` and `proc-macro2`, about half of a cold build).

/// The keys of the `[dependencies]` table of this crate's manifest.
fn dependencies() -> Vec<String> {
    let manifest = include_str!("../Cargo.toml");
    let mut inside = false;
    let mut out = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == "[dependencies]";
            continue;
        }
        if inside && !line.is_empty() && !line.starts_with('#') {
            let key = line.split(['=', '.']).next().unwrap_or("").trim();
            out.push(key.to_owned());
        }
    }
    out
}

#[test]
fn cuda_sys_depends_only_on_libloading_and_once_cell() {
    let mut deps = dependencies();
    deps.sort();
    assert_eq!(deps, ["libloading", "once_cell"]);
    let manifest = include_str!("../Cargo.toml");
    assert!(!manifest.contains("[build-dependencies]"));
    assert!(!manifest.contains("proc-macro"));
}
