//! Lists `kernels/*.cu` at build time into `$OUT_DIR/kernel_files.rs`, so
//! that `tests/kernels_compile.rs` can check that every kernel file is a
//! `SOURCES` entry without reading the checkout at run time: the GPU bundle
//! (`scripts/gpu-bundle.sh`) runs its test binaries on a machine that has
//! no checkout.

use std::env;
use std::fs;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let dir = manifest.join("../kernels");
    // A directory: cargo rescans it, so an added or removed file reruns this.
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            e.expect("a directory entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".cu"))
        .collect();
    names.sort_unstable();
    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets it")).join("kernel_files.rs");
    let text = format!(
        "/// The `.cu` files of `kernels/` when this crate was built, sorted.\n\
         pub const KERNEL_FILES: &[&str] = &{names:?};\n"
    );
    fs::write(&out, text).unwrap_or_else(|e| panic!("{}: {e}", out.display()));
}
