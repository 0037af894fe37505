//! What `fn main() -> cudakit::Result<()>` prints when libcuda cannot be
//! loaded: the error's `Debug`, which must read like its `Display` (the
//! paths tried and the hint, each on its own line), not a one-line struct
//! dump.
//!
//! Process-global (`CUDAKIT_LIBCUDA`, and the first load's result is kept),
//! hence one test in its own binary.

use cudakit::{Context, Error};

#[test]
fn a_load_failure_debug_prints_the_readable_form() {
    let missing = "/nonexistent/cudakit-test/libcuda.so.1";
    // An explicit path is the only candidate the loader tries.
    std::env::set_var("CUDAKIT_LIBCUDA", missing);
    let err = Context::new(0).expect_err("a libcuda that does not exist cannot load");
    assert!(matches!(err, Error::Load(_)), "{err:#?}");

    let readable = format!("{err:?}");
    assert_eq!(readable, err.to_string());
    let lines: Vec<&str> = readable.lines().collect();
    assert_eq!(
        lines[0], "libcuda could not be loaded; tried 1 candidate(s):",
        "{readable}"
    );
    assert_eq!(lines[1], format!("  {missing}: no such file"), "{readable}");
    assert!(lines[2].starts_with("hint: "), "{readable}");
    assert!(lines[2].contains("CUDAKIT_LIBCUDA"), "{readable}");
    assert!(!readable.contains("Attempt {"), "{readable}");
    assert!(!readable.contains("NotFound"), "{readable}");

    // The structure is one `#` away.
    let structure = format!("{err:#?}");
    assert!(
        structure.starts_with("Load(\n    NotFound {"),
        "{structure}"
    );
    assert!(structure.contains("candidate: \"/nonexistent/cudakit-test/libcuda.so.1\""));

    // What `main` returning this error prints: `Error: ` then the Debug form.
    let from_main = format!("Error: {err:?}");
    assert!(from_main.starts_with("Error: libcuda could not be loaded"));
}
