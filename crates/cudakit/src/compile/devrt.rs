//! The device runtime, `libcudadevrt.a`: the static library that
//! device-side kernel launches (dynamic parallelism) link against. It is a
//! file, not a shared library, handed to the linker
//! ([`Linker::add_device_runtime`](crate::compile::linker::Linker::add_device_runtime),
//! or the preset [`Linker::with_device_runtime`](crate::compile::linker::Linker::with_device_runtime)).
//!
//! Where it is looked for, in order ([`device_runtime_candidates`]):
//!
//! 1. `CUDAKIT_CUDADEVRT`, when set: the only candidate.
//! 2. Beside the loaded NVRTC (a toolkit's `lib64`, or a wheel's
//!    `nvidia/cu13/lib`, which `nvidia-cuda-runtime` shares with NVRTC).
//! 3. The toolkit folders: `lib64`, `lib`, `targets/<arch>-linux/lib` under
//!    `CUDA_PATH`, `CUDA_HOME`, `/usr/local/cuda`, every
//!    `/usr/local/cuda-<version>` (newest first) and `/opt/cuda`.
//! 4. The pip wheels: `nvidia/cu13/lib` and `nvidia/cuda_runtime/lib` under
//!    every site-packages folder of [`cuda_sys::loader::site_packages`], and
//!    under `$CUDAKIT_DEPS_DIR/python` (where `scripts/nvrtc-env.sh`
//!    installs wheels).
//!
//! A missing one is [`Error::DeviceRuntimeNotFound`] listing every path.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

const FILE: &str = "libcudadevrt.a";

/// The toolkit's per-architecture library folder.
const TARGET_LIB: &str = if cfg!(target_arch = "aarch64") {
    "targets/sbsa-linux/lib"
} else {
    "targets/x86_64-linux/lib"
};

/// Where `libcudadevrt.a` is looked for, in order, given an environment,
/// the folder of the loaded NVRTC, the versioned toolkits under
/// `/usr/local` (`cuda-13.0`, ...) and the site-packages folders.
pub fn device_runtime_candidates(
    env: &dyn Fn(&str) -> Option<String>,
    nvrtc_folder: Option<PathBuf>,
    versioned_toolkits: &[String],
    site_packages: &[PathBuf],
) -> Vec<PathBuf> {
    let get = |name: &str| env(name).filter(|v| !v.is_empty());
    if let Some(explicit) = get("CUDAKIT_CUDADEVRT") {
        return vec![PathBuf::from(explicit)];
    }
    let mut out: Vec<PathBuf> = Vec::new();
    let mut push = |p: PathBuf| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    if let Some(folder) = nvrtc_folder {
        push(folder.join(FILE));
    }
    let mut roots: Vec<PathBuf> = ["CUDA_PATH", "CUDA_HOME"]
        .iter()
        .filter_map(|v| get(v).map(PathBuf::from))
        .collect();
    roots.push(PathBuf::from("/usr/local/cuda"));
    let mut versioned: Vec<&String> = versioned_toolkits.iter().collect();
    versioned.sort_by_key(|name| std::cmp::Reverse(version_key(name)));
    roots.extend(versioned.iter().map(|n| Path::new("/usr/local").join(n)));
    roots.push(PathBuf::from("/opt/cuda"));
    for root in roots {
        for sub in ["lib64", "lib", TARGET_LIB] {
            push(root.join(sub).join(FILE));
        }
    }
    let mut wheels: Vec<PathBuf> = site_packages.to_vec();
    if let Some(deps) = get("CUDAKIT_DEPS_DIR") {
        wheels.push(Path::new(&deps).join("python"));
    }
    for root in wheels {
        push(root.join("nvidia/cu13/lib").join(FILE));
        push(root.join("nvidia/cuda_runtime/lib").join(FILE));
    }
    out
}

fn version_key(name: &str) -> Vec<u64> {
    name.split(|c: char| !c.is_ascii_digit())
        .filter(|p| !p.is_empty())
        .map(|p| p.parse().unwrap_or(u64::MAX))
        .collect()
}

/// The folder of the loaded NVRTC, if one is loaded: its path when opened
/// by path, else where the process mapped it from (`/proc/self/maps`).
fn nvrtc_folder() -> Option<PathBuf> {
    let (_, loaded) = cuda_sys::nvrtc_with_origin().ok()?;
    if loaded.candidate.contains('/') {
        let path = std::fs::canonicalize(&loaded.candidate)
            .unwrap_or_else(|_| PathBuf::from(&loaded.candidate));
        return path.parent().map(Path::to_path_buf);
    }
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .find(|path| {
            Path::new(path)
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libnvrtc.so"))
        })
        .and_then(|path| Path::new(path).parent().map(Path::to_path_buf))
}

/// Finds `libcudadevrt.a` (see the [module](self) docs for the order).
///
/// # Errors
///
/// [`Error::DeviceRuntimeNotFound`] listing every path looked at.
pub fn device_runtime_path() -> Result<PathBuf> {
    let env = |name: &str| std::env::var(name).ok();
    let versioned: Vec<String> = std::fs::read_dir("/usr/local")
        .map(|read| {
            read.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.starts_with("cuda-"))
                .collect()
        })
        .unwrap_or_default();
    let candidates = device_runtime_candidates(
        &env,
        nvrtc_folder(),
        &versioned,
        &cuda_sys::loader::site_packages(),
    );
    find(&candidates, |p| p.is_file())
}

fn find(candidates: &[PathBuf], exists: impl Fn(&Path) -> bool) -> Result<PathBuf> {
    match candidates.iter().find(|p| exists(p)) {
        Some(found) => Ok(found.clone()),
        None => Err(Error::DeviceRuntimeNotFound {
            looked_in: candidates.iter().map(|p| p.display().to_string()).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn the_order_is_nvrtc_toolkits_then_wheels() {
        let env = env(&[
            ("CUDA_PATH", "/opt/tk"),
            ("CUDAKIT_DEPS_DIR", "/repo/.deps"),
        ]);
        let list = device_runtime_candidates(
            &env,
            Some(PathBuf::from("/wheel/nvidia/cu13/lib")),
            &["cuda-12.4".into(), "cuda-13.0".into()],
            &[PathBuf::from("/venv/lib/python3.12/site-packages")],
        );
        let at = |p: &str| {
            list.iter()
                .position(|c| c == Path::new(p))
                .unwrap_or_else(|| panic!("{p} missing from {list:#?}"))
        };
        assert_eq!(at("/wheel/nvidia/cu13/lib/libcudadevrt.a"), 0);
        assert_eq!(at("/opt/tk/lib64/libcudadevrt.a"), 1);
        let order = [
            at("/opt/tk/lib64/libcudadevrt.a"),
            at("/usr/local/cuda/lib64/libcudadevrt.a"),
            at("/usr/local/cuda-13.0/lib64/libcudadevrt.a"),
            at("/usr/local/cuda-12.4/lib64/libcudadevrt.a"),
            at("/opt/cuda/lib64/libcudadevrt.a"),
            at("/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudadevrt.a"),
            at("/repo/.deps/python/nvidia/cu13/lib/libcudadevrt.a"),
        ];
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{list:#?}");
        assert!(list.contains(&PathBuf::from(format!(
            "/opt/tk/{TARGET_LIB}/libcudadevrt.a"
        ))));
    }

    #[test]
    fn the_override_is_the_only_candidate() {
        let env = env(&[
            ("CUDAKIT_CUDADEVRT", "/x/libcudadevrt.a"),
            ("CUDA_PATH", "/opt/tk"),
        ]);
        let list = device_runtime_candidates(&env, Some(PathBuf::from("/w")), &[], &[]);
        assert_eq!(list, [PathBuf::from("/x/libcudadevrt.a")]);
    }

    #[test]
    fn a_missing_runtime_lists_where_it_looked() {
        let candidates = vec![
            PathBuf::from("/a/libcudadevrt.a"),
            PathBuf::from("/b/libcudadevrt.a"),
        ];
        let err = find(&candidates, |_| false).unwrap_err();
        let Error::DeviceRuntimeNotFound { looked_in } = &err else {
            panic!("{err:?}");
        };
        assert_eq!(looked_in.len(), 2);
        let text = err.to_string();
        assert!(
            text.contains("\n  /a/libcudadevrt.a\n  /b/libcudadevrt.a"),
            "{text}"
        );
        assert!(text.contains("CUDAKIT_CUDADEVRT"), "{text}");
        assert_eq!(
            find(&candidates, |p| p.starts_with("/b")).unwrap(),
            PathBuf::from("/b/libcudadevrt.a")
        );
    }

    /// The wheel that scripts/nvrtc-env.sh installs is found for real.
    #[test]
    fn the_installed_runtime_is_found_when_there_is_one() {
        match device_runtime_path() {
            Ok(path) => assert!(path.is_file()),
            Err(Error::DeviceRuntimeNotFound { looked_in }) => assert!(!looked_in.is_empty()),
            Err(other) => panic!("{other:?}"),
        }
    }
}
