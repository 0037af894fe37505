//! Generates an exported no-op for every symbol of cuda-sys's libcuda table
//! that `src/lib.rs` does not implement by hand, so that the stand-in passes
//! the loader's required-symbol check. The no-ops return
//! CUDA_ERROR_NOT_SUPPORTED (801).
//!
//! The hand-written functions in `src/lib.rs` export the *versioned* names
//! (`cuMemAlloc_v2`, ...) written independently of the table: if the table
//! named the wrong symbol, the generated no-op would answer instead, and the
//! tests that expect the recording implementation would fail.

use std::collections::BTreeSet;
use std::env;
use std::fs;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let table = manifest.join("../../crates/cuda-sys/src/driver.rs");
    let hand = manifest.join("src/lib.rs");
    println!("cargo:rerun-if-changed={}", table.display());
    println!("cargo:rerun-if-changed={}", hand.display());
    let table = fs::read_to_string(&table).expect("read driver.rs");
    let hand = fs::read_to_string(&hand).expect("read lib.rs");

    let mut hand_written = BTreeSet::new();
    for line in hand.lines() {
        if let Some(rest) = line.trim().strip_prefix("pub unsafe extern \"C\" fn ") {
            if let Some(name) = rest.split('(').next() {
                hand_written.insert(name.to_owned());
            }
        }
    }
    let omit_mem_alloc = env::var_os("CARGO_FEATURE_OMIT_MEM_ALLOC").is_some();

    let mut out = String::new();
    for line in table.lines() {
        let Some((_, rest)) = line.split_once("= \"") else {
            continue;
        };
        let Some((symbol, tail)) = rest.split_once('"') else {
            continue;
        };
        if !tail.trim_start().starts_with(": fn(") || !symbol.starts_with("cu") {
            continue;
        }
        if hand_written.contains(symbol) {
            continue;
        }
        out.push_str(&format!(
            "#[no_mangle]\npub extern \"C\" fn {symbol}() -> i32 {{ not_supported(\"{symbol}\") }}\n"
        ));
    }
    if omit_mem_alloc && !hand_written.contains("cuMemAlloc_v2") {
        panic!("cuMemAlloc_v2 must be hand-written so the feature can omit it");
    }
    let dest = PathBuf::from(env::var("OUT_DIR").expect("cargo sets it")).join("generated.rs");
    fs::write(dest, out).expect("write generated.rs");
}
