//! The README's quick start is the one in the cudakit crate's README, which
//! is compiled as a doctest (`cudakit::ReadmeDoctests`), and the saxpy
//! example holds the same kernel. CPU only.

fn first_rust_block(text: &str) -> &str {
    let start = text.find("```rust").expect("a rust block");
    let body = &text[start..];
    let body = &body[body.find('\n').unwrap() + 1..];
    &body[..body.find("\n```").expect("the block's end")]
}

#[test]
fn the_readme_quick_start_is_the_doctested_one() {
    let root = include_str!("../../README.md");
    let crate_readme = include_str!("../../crates/cudakit/README.md");
    let quick = first_rust_block(root);
    assert_eq!(quick, first_rust_block(crate_readme));
    assert!(quick.contains("s.launch(&stream, &saxpy"), "{quick}");
    let example = include_str!("../../crates/cudakit/examples/saxpy.rs");
    let kernel = "if (i < n) y[i] = a * x[i] + y[i];";
    assert!(quick.contains(kernel) && example.contains(kernel));
}
