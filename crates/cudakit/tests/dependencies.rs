//! The safe layer stays cheap to build and to audit (issue 23, build time):
//! its dependencies are the raw layer, `once_cell` and `libc`, and no
//! procedural-macro crate. `thiserror` pulled in `syn`, `quote` and
//! `proc-macro2`, which a cold build compiled before it could start on
//! cudakit; its `Display` and `Error` impls are written out in `error/`.

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
fn cudakit_depends_only_on_cuda_sys_once_cell_and_libc() {
    let mut deps = dependencies();
    deps.sort();
    assert_eq!(deps, ["cuda-sys", "libc", "once_cell"]);
    let manifest = include_str!("../Cargo.toml");
    assert!(!manifest.contains("[build-dependencies]"));
    assert!(!manifest.contains("proc-macro"));
}
