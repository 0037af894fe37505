//! `cudakit doctor`: where libcuda and libnvrtc came from (or every place
//! tried), the driver and NVRTC versions, NVRTC's targets, each device with
//! its key limits, the compile cache; and, when something is missing, a
//! diagnosis a person can act on. `matmul` and `bench` print the same
//! diagnosis when they find no usable GPU.

use std::path::Path;

use cuda_sys::{LoadError, Loaded};
use cudakit::error::DriverCode;
use cudakit::{CacheStats, Device, DeviceLimits, Error};

use crate::args::{CliError, Exit, Parser, Token};
use crate::json::Json;
use crate::units;
use crate::Global;

pub(crate) const HELP: &str = "\
Show which libcuda and libnvrtc were found and where (or every path tried),
the driver and NVRTC versions, the architectures NVRTC compiles for, each
device with its key limits, and the compile cache. When something is missing
it says what was tried and what to install.

Usage: cudakit doctor [--json]

Exit codes: 0 when a GPU and NVRTC are usable; 2 when either is not (the
diagnosis at the end says why and what to do); 64 for a usage error.";

/// Runs `cudakit doctor`.
pub(crate) fn run(mut args: Parser, global: &mut Global) -> Result<Exit, CliError> {
    while let Some(token) = args.next_token() {
        match &token {
            Token::Flag(f, v) if f == "--json" => {
                args.no_value(f, v)?;
                global.json = true;
            }
            Token::Flag(f, _) if f == "--help" || f == "-h" => {
                println!("{HELP}");
                return Ok(Exit::Ok);
            }
            _ => return Err(args.unknown(&token)),
        }
    }
    let report = Report::gather();
    let exit = report.exit();
    if global.json {
        let json = report
            .to_json()
            .with("ok", exit == Exit::Ok)
            .with("exit_code", exit.code());
        println!("{}", json.to_pretty());
    } else {
        print!("{}", report.render());
    }
    Ok(exit)
}

/// What the loader did for one library.
#[derive(Debug, Clone)]
pub(crate) enum Library {
    Found(Loaded),
    Missing(LoadError),
}

/// One device's identity and limits.
#[derive(Debug, Clone)]
pub(crate) struct DeviceInfo {
    pub(crate) ordinal: i32,
    pub(crate) name: String,
    pub(crate) uuid: String,
    pub(crate) memory: u64,
    pub(crate) limits: DeviceLimits,
}

/// NVRTC's version and the architectures it compiles for.
type NvrtcInfo = ((i32, i32), Vec<u32>);

/// Everything the doctor looks at.
#[derive(Debug, Clone)]
pub(crate) struct Report {
    pub(crate) libcuda: Library,
    /// `cuInit` and `cuDriverGetVersion`; `None` when libcuda did not load.
    pub(crate) driver: Option<Result<(i32, i32), Error>>,
    /// `None` when the driver did not initialise.
    pub(crate) devices: Option<Result<Vec<Result<DeviceInfo, Error>>, Error>>,
    pub(crate) libnvrtc: Library,
    /// NVRTC's version and targets; `None` when libnvrtc did not load.
    pub(crate) nvrtc: Option<Result<NvrtcInfo, Error>>,
    pub(crate) cache: CacheStats,
    /// The environment variables that steer the search, where set.
    pub(crate) env: Vec<(&'static str, String)>,
    /// Where NCCL (optional, for collectives) was found, or every path tried.
    pub(crate) libnccl: Library,
    /// The peer matrix; `None` with fewer than two usable devices.
    pub(crate) peers: Option<Result<cudakit::multi::PeerMatrix, Error>>,
}

const ENV_VARS: &[&str] = &[
    "CUDAKIT_LIBCUDA",
    "CUDAKIT_LIBNVRTC",
    "CUDAKIT_LIBNCCL",
    "NCCL_NVLS_ENABLE",
    "CUDA_VISIBLE_DEVICES",
    "CUDA_PATH",
    "CUDA_HOME",
    "CUDAKIT_CACHE",
    "CUDAKIT_CACHE_DIR",
    "CUDAKIT_CACHE_MAX_BYTES",
];

impl Report {
    /// Loads both libraries (as the process will use them), initialises the
    /// driver and reads every device. Never panics: every failure is kept.
    pub(crate) fn gather() -> Report {
        let libcuda = match cuda_sys::driver_with_origin() {
            Ok((_, loaded)) => Library::Found(loaded.clone()),
            Err(err) => Library::Missing(err),
        };
        let driver = match libcuda {
            Library::Found(_) => Some(cudakit::driver_version()),
            Library::Missing(_) => None,
        };
        let devices = match driver {
            Some(Ok(_)) => Some(Device::all().map(|all| all.iter().map(device_info).collect())),
            _ => None,
        };
        let libnvrtc = match cuda_sys::nvrtc_with_origin() {
            Ok((_, loaded)) => Library::Found(loaded.clone()),
            Err(err) => Library::Missing(err),
        };
        let nvrtc = match libnvrtc {
            Library::Found(_) => Some(cudakit::compile::program::nvrtc_version().and_then(|v| {
                cudakit::compile::program::supported_archs().map(|a| (v, a.to_vec()))
            })),
            Library::Missing(_) => None,
        };
        let libnccl = match cuda_sys::nccl_with_origin() {
            Ok((_, loaded)) => Library::Found(loaded.clone()),
            Err(err) => Library::Missing(err),
        };
        let peers = match &devices as &Option<Result<Vec<Result<DeviceInfo, Error>>, Error>> {
            Some(Ok(list)) if Vec::len(list) >= 2 => Some(cudakit::multi::PeerMatrix::read()),
            _ => None,
        };
        let env = ENV_VARS
            .iter()
            .filter_map(|&name| std::env::var(name).ok().map(|v| (name, v)))
            .collect();
        Report {
            libcuda,
            driver,
            devices,
            libnvrtc,
            nvrtc,
            cache: cudakit::compile::cache::stats(),
            env,
            libnccl,
            peers,
        }
    }

    /// The devices that could be read.
    pub(crate) fn usable_devices(&self) -> Vec<&DeviceInfo> {
        match &self.devices {
            Some(Ok(list)) => list.iter().filter_map(|d| d.as_ref().ok()).collect(),
            _ => Vec::new(),
        }
    }

    /// Whether at least one GPU can be used.
    pub(crate) fn gpu_ok(&self) -> bool {
        !self.usable_devices().is_empty()
    }

    /// Whether NVRTC loaded and answered.
    pub(crate) fn nvrtc_ok(&self) -> bool {
        matches!(self.nvrtc, Some(Ok(_)))
    }

    /// 0 when a GPU and NVRTC are usable, else 2.
    pub(crate) fn exit(&self) -> Exit {
        if self.gpu_ok() && self.nvrtc_ok() {
            Exit::Ok
        } else {
            Exit::NoGpu
        }
    }

    fn archs(&self) -> &[u32] {
        match &self.nvrtc {
            Some(Ok((_, archs))) => archs,
            _ => &[],
        }
    }

    /// What NVRTC produces for a device: CUBIN for its own architecture, or
    /// PTX for the newest older one (the driver JIT-compiles it).
    fn nvrtc_target(&self, cc: (u32, u32)) -> Option<String> {
        if !self.nvrtc_ok() {
            return None;
        }
        let number = cc.0 * 10 + cc.1;
        let archs = self.archs();
        if archs.contains(&number) {
            return Some(format!("CUBIN for sm_{number}"));
        }
        Some(match archs.iter().copied().filter(|&a| a <= number).max() {
            Some(best) => format!("PTX for compute_{best} (JIT-compiled by the driver)"),
            None => "none: the device is older than every NVRTC target".to_owned(),
        })
    }

    /// The problems found, each with what to do about it; empty when all is
    /// well.
    pub(crate) fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        match &self.libcuda {
            Library::Missing(LoadError::NotFound { attempts, .. }) => {
                let explicit = std::env::var("CUDAKIT_LIBCUDA")
                    .ok()
                    .filter(|v| !v.is_empty());
                let mut text = match explicit {
                    Some(path) => format!(
                        "CUDAKIT_LIBCUDA={path} could not be opened ({}). Point it at the \
                         libcuda.so.1 that comes with the NVIDIA driver, or unset it to search \
                         the standard places (and install the NVIDIA driver, 580 or newer for \
                         CUDA 13, if there is none).",
                        attempts
                            .first()
                            .map_or("no reason given", |a| a.reason.as_str())
                    ),
                    None => format!(
                        "libcuda.so.1, the NVIDIA driver's library, was not found ({} place(s) \
                         tried). Install the NVIDIA driver (580 or newer for \
                         CUDA 13) from your distribution or https://www.nvidia.com/drivers, then \
                         check that `nvidia-smi` lists the GPU. If the driver lives somewhere \
                         unusual, set CUDAKIT_LIBCUDA to the full path of libcuda.so.1.",
                        attempts.len()
                    ),
                };
                if Path::new("/proc/driver/nvidia/version").exists() {
                    text.push_str(
                        " Note: the NVIDIA kernel driver is loaded (/proc/driver/nvidia/version \
                         exists) but its user-space library is not visible: in a container, \
                         start it with the NVIDIA Container Toolkit (`docker run --gpus all ...`); \
                         on the host, install the driver's user-space package.",
                    );
                }
                out.push(text);
            }
            Library::Missing(LoadError::MissingSymbol {
                path,
                symbol,
                reason,
                ..
            }) => out.push(format!(
                "the libcuda at {path} lacks `{symbol}` ({reason}): it is too old or not \
                 NVIDIA's driver library. Install NVIDIA driver 580 or newer, or point \
                 CUDAKIT_LIBCUDA at the right libcuda.so.1."
            )),
            Library::Missing(other) => out.push(format!("libcuda could not be loaded: {other}")),
            Library::Found(loaded) => match &self.driver {
                Some(Err(err)) => out.push(driver_problem(err, &loaded.candidate)),
                Some(Ok(_)) => match &self.devices {
                    Some(Err(err)) => out.push(format!(
                        "the devices could not be listed: {err}. Check `nvidia-smi`."
                    )),
                    Some(Ok(list)) if list.is_empty() => out.push(no_device_text()),
                    Some(Ok(list)) => {
                        for err in list.iter().filter_map(|d| d.as_ref().err()) {
                            out.push(format!("a device could not be read: {err}"));
                        }
                    }
                    None => {}
                },
                None => {}
            },
        }
        match (&self.libnvrtc, &self.nvrtc) {
            (Library::Missing(err), _) => {
                let tried = match err {
                    LoadError::NotFound { attempts, .. } => {
                        format!("{} place(s) tried", attempts.len())
                    }
                    other => other.to_string(),
                };
                out.push(format!(
                    "libnvrtc (NVIDIA's run-time compiler, needed to compile kernels) was not \
                     found ({tried}). Install it with `python3 -m pip install \
                     nvidia-cuda-nvrtc==13.0.88` (cudakit searches pip's site-packages), or \
                     install the CUDA toolkit, or set CUDAKIT_LIBNVRTC to the absolute path of \
                     libnvrtc.so.13."
                ));
            }
            (Library::Found(loaded), Some(Err(err))) => out.push(format!(
                "libnvrtc at {} loaded but does not answer: {err}. Install \
                 nvidia-cuda-nvrtc==13.0.88 or point CUDAKIT_LIBNVRTC at a working libnvrtc.so.13.",
                loaded.candidate
            )),
            _ => {}
        }
        out
    }

    /// Facts worth knowing beside the problems.
    pub(crate) fn notes(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let (Some(Ok((version, archs))), false) = (&self.nvrtc, self.gpu_ok()) {
            let example = archs
                .iter()
                .rev()
                .find(|&&a| a == 90)
                .or(archs.last())
                .map_or("sm_90".to_owned(), |a| format!("sm_{a}"));
            out.push(format!(
                "NVRTC {}.{} is available, so compiling works without a GPU: \
                 `cudakit compile --arch {example} FILE.cu`.",
                version.0, version.1
            ));
        }
        for device in self.usable_devices() {
            let cc = device.limits.compute_capability;
            if let Some(target) = self.nvrtc_target(cc) {
                if !target.starts_with("CUBIN") {
                    out.push(format!(
                        "device {} is sm_{}{}, which this NVRTC cannot produce CUBIN for; \
                         kernels go through {target}.",
                        device.ordinal, cc.0, cc.1
                    ));
                }
            }
        }
        out
    }

    /// The verdict line and the problems: what `matmul` and `bench` print
    /// when they cannot run. With `attempts`, every place a missing library
    /// was looked for is listed too (the doctor's report lists them above).
    pub(crate) fn diagnosis(&self, attempts: bool) -> String {
        let mut text = String::new();
        let verdict = match (self.gpu_ok(), self.nvrtc_ok()) {
            (true, true) => "ready: a GPU and NVRTC are usable".to_owned(),
            (false, true) => "no usable GPU (exit code 2)".to_owned(),
            (true, false) => {
                "NVRTC is missing, so no kernel can be compiled (exit code 2)".to_owned()
            }
            (false, false) => "no usable GPU and no NVRTC (exit code 2)".to_owned(),
        };
        text.push_str(&format!("diagnosis: {verdict}\n"));
        for problem in self.problems() {
            text.push_str(&bullet(&problem));
        }
        for note in self.notes() {
            text.push_str(&bullet(&note));
        }
        if attempts {
            for library in [&self.libcuda, &self.libnvrtc] {
                if let Library::Missing(LoadError::NotFound {
                    library, attempts, ..
                }) = library
                {
                    text.push_str(&format!("  places tried for {library}:\n"));
                    for a in attempts {
                        text.push_str(&format!("    {a}\n"));
                    }
                }
            }
        }
        text
    }

    /// The whole report for people.
    pub(crate) fn render(&self) -> String {
        let mut t = String::from("cudakit doctor\n\n");
        t.push_str("libcuda (NVIDIA driver API)\n");
        render_library(&mut t, &self.libcuda);
        match &self.driver {
            Some(Ok((major, minor))) => line(&mut t, "driver", &format!("CUDA {major}.{minor}")),
            Some(Err(err)) => line(&mut t, "driver", &format!("cuInit failed: {err}")),
            None => line(&mut t, "driver", "- (libcuda not loaded)"),
        }

        t.push_str("\nlibnvrtc (run-time compiler)\n");
        render_library(&mut t, &self.libnvrtc);
        match &self.nvrtc {
            Some(Ok(((major, minor), archs))) => {
                line(&mut t, "version", &format!("NVRTC {major}.{minor}"));
                let names: Vec<String> = archs.iter().map(|a| format!("sm_{a}")).collect();
                line(&mut t, "targets", &names.join(" "));
            }
            Some(Err(err)) => line(&mut t, "version", &format!("failed: {err}")),
            None => line(&mut t, "version", "- (libnvrtc not loaded)"),
        }

        t.push_str("\ndevices\n");
        match &self.devices {
            None => line(&mut t, "none", "(the driver is not usable)"),
            Some(Err(err)) => line(&mut t, "error", &err.to_string()),
            Some(Ok(list)) if list.is_empty() => line(&mut t, "none", "(the driver reports 0)"),
            Some(Ok(list)) => {
                for (i, device) in list.iter().enumerate() {
                    match device {
                        Ok(d) => self.render_device(&mut t, d),
                        Err(err) => line(&mut t, &format!("device {i}"), &format!("error: {err}")),
                    }
                }
            }
        }

        if let Some(peers) = &self.peers {
            t.push('\n');
            match peers {
                Ok(matrix) => {
                    t.push_str(&matrix.to_string());
                    t.push('\n');
                }
                Err(err) => line(&mut t, "peer access", &format!("error: {err}")),
            }
        }

        t.push_str("\nlibnccl (collectives; optional)\n");
        render_library(&mut t, &self.libnccl);
        if let Library::Found(_) = &self.libnccl {
            match cudakit::multi::nccl::version() {
                Ok((a, b, c)) => line(&mut t, "version", &format!("NCCL {a}.{b}.{c}")),
                Err(err) => line(&mut t, "version", &format!("failed: {err}")),
            }
        }

        t.push_str("\ncompile cache\n");
        let c = &self.cache;
        if !c.enabled {
            line(&mut t, "status", "off (CUDAKIT_CACHE)");
        } else {
            match &c.dir {
                Some(dir) => {
                    line(&mut t, "folder", &dir.display().to_string());
                    line(
                        &mut t,
                        "size",
                        &format!(
                            "{} entr{}, {} (bound {})",
                            c.disk_entries,
                            if c.disk_entries == 1 { "y" } else { "ies" },
                            units::bytes(c.disk_bytes),
                            units::bytes(c.max_bytes)
                        ),
                    );
                }
                None => line(&mut t, "folder", "none (memory only)"),
            }
        }

        if !self.env.is_empty() {
            t.push_str("\nenvironment\n");
            for (name, value) in &self.env {
                t.push_str(&format!("  {name}={value}\n"));
            }
        }
        t.push('\n');
        t.push_str(&self.diagnosis(false));
        t
    }

    fn render_device(&self, t: &mut String, d: &DeviceInfo) {
        let l = &d.limits;
        let (major, minor) = l.compute_capability;
        line(t, &format!("device {}", d.ordinal), &d.name);
        line(t, "  uuid", &d.uuid);
        let target = self
            .nvrtc_target(l.compute_capability)
            .map_or(String::new(), |t| format!("; NVRTC target: {t}"));
        line(
            t,
            "  compute",
            &format!("sm_{major}{minor} (compute capability {major}.{minor}){target}"),
        );
        line(t, "  memory", &units::bytes(d.memory));
        line(
            t,
            "  SMs",
            &format!("{} (warp size {})", l.multiprocessors, l.warp_size),
        );
        line(
            t,
            "  threads",
            &format!(
                "{} per block (block {}x{}x{}, grid {}x{}x{})",
                l.max_threads_per_block,
                l.max_block_dim[0],
                l.max_block_dim[1],
                l.max_block_dim[2],
                l.max_grid_dim[0],
                l.max_grid_dim[1],
                l.max_grid_dim[2]
            ),
        );
        line(
            t,
            "  shared",
            &format!(
                "{} per block by default, {} opt-in",
                units::bytes(u64::from(l.max_shared_per_block)),
                units::bytes(u64::from(l.max_shared_per_block_optin))
            ),
        );
        let yes = |b: bool| if b { "yes" } else { "no" };
        line(
            t,
            "  features",
            &format!(
                "cooperative launch {}, clusters {}, managed memory {} (concurrent access {})",
                yes(l.cooperative_launch),
                yes(l.cluster_launch),
                yes(l.managed_memory),
                yes(l.concurrent_managed_access)
            ),
        );
    }

    /// The report as a JSON object (without `ok` and `exit_code`, which the
    /// caller adds).
    pub(crate) fn to_json(&self) -> Json {
        let driver = match &self.driver {
            Some(Ok((major, minor))) => Json::object()
                .with("version", format!("{major}.{minor}"))
                .with("error", Json::Null),
            Some(Err(err)) => Json::object()
                .with("version", Json::Null)
                .with("error", err.to_string()),
            None => Json::object()
                .with("version", Json::Null)
                .with("error", "libcuda not loaded"),
        };
        let devices = match &self.devices {
            Some(Ok(list)) => Json::Arr(
                list.iter()
                    .map(|d| match d {
                        Ok(d) => self.device_json(d),
                        Err(err) => Json::object().with("error", err.to_string()),
                    })
                    .collect(),
            ),
            _ => Json::Arr(Vec::new()),
        };
        let devices_error = match &self.devices {
            Some(Err(err)) => Json::from(err.to_string()),
            _ => Json::Null,
        };
        let nvrtc = match &self.nvrtc {
            Some(Ok(((major, minor), archs))) => Json::object()
                .with("version", format!("{major}.{minor}"))
                .with("archs", archs.clone())
                .with("error", Json::Null),
            Some(Err(err)) => Json::object()
                .with("version", Json::Null)
                .with("archs", Json::Arr(Vec::new()))
                .with("error", err.to_string()),
            None => Json::object()
                .with("version", Json::Null)
                .with("archs", Json::Arr(Vec::new()))
                .with("error", "libnvrtc not loaded"),
        };
        let c = &self.cache;
        let cache = Json::object()
            .with("enabled", c.enabled)
            .with("dir", c.dir.as_ref().map(|d| d.display().to_string()))
            .with("entries", c.disk_entries)
            .with("bytes", c.disk_bytes)
            .with("max_bytes", c.max_bytes);
        let env = Json::Obj(
            self.env
                .iter()
                .map(|(k, v)| ((*k).to_owned(), Json::from(v)))
                .collect(),
        );
        Json::object()
            .with("command", "doctor")
            .with("libcuda", library_json(&self.libcuda))
            .with("driver", driver)
            .with("libnvrtc", library_json(&self.libnvrtc))
            .with("nvrtc", nvrtc)
            .with("devices", devices)
            .with("devices_error", devices_error)
            .with("cache", cache)
            .with("environment", env)
            .with("gpu_usable", self.gpu_ok())
            .with("nvrtc_usable", self.nvrtc_ok())
            .with("problems", self.problems())
            .with("notes", self.notes())
    }

    fn device_json(&self, d: &DeviceInfo) -> Json {
        let l = &d.limits;
        Json::object()
            .with("ordinal", d.ordinal)
            .with("name", &d.name)
            .with("uuid", &d.uuid)
            .with(
                "compute_capability",
                format!("{}.{}", l.compute_capability.0, l.compute_capability.1),
            )
            .with("nvrtc_target", self.nvrtc_target(l.compute_capability))
            .with("memory_bytes", d.memory)
            .with("multiprocessors", l.multiprocessors)
            .with("warp_size", l.warp_size)
            .with("max_threads_per_block", l.max_threads_per_block)
            .with("max_block_dim", l.max_block_dim.to_vec())
            .with("max_grid_dim", l.max_grid_dim.to_vec())
            .with("shared_per_block", l.max_shared_per_block)
            .with("shared_per_block_optin", l.max_shared_per_block_optin)
            .with("cooperative_launch", l.cooperative_launch)
            .with("cluster_launch", l.cluster_launch)
            .with("managed_memory", l.managed_memory)
            .with("concurrent_managed_access", l.concurrent_managed_access)
    }
}

fn device_info(device: &Device) -> Result<DeviceInfo, Error> {
    Ok(DeviceInfo {
        ordinal: device.ordinal(),
        name: device.name()?,
        uuid: device.uuid_string()?,
        memory: device.total_memory()? as u64,
        limits: device.limits()?,
    })
}

fn no_device_text() -> String {
    let mut text = "the NVIDIA driver is installed but reports no CUDA device. Check that \
                    `nvidia-smi` lists a GPU"
        .to_owned();
    if let Ok(v) = std::env::var("CUDA_VISIBLE_DEVICES") {
        text.push_str(&format!(
            "; CUDA_VISIBLE_DEVICES={v:?} limits which devices are visible (unset it to see all)"
        ));
    }
    text.push('.');
    text
}

/// What a failed `cuInit` means, and what to do.
fn driver_problem(err: &Error, candidate: &str) -> String {
    let code = err.driver_error().map(|e| e.code);
    match code {
        Some(DriverCode::NoDevice) => no_device_text(),
        Some(DriverCode::StubLibrary) => format!(
            "{candidate} is the CUDA toolkit's stub library, not the driver ({err}). Install \
             the NVIDIA driver, and remove the toolkit's `stubs` folder from LD_LIBRARY_PATH \
             (or point CUDAKIT_LIBCUDA at the driver's libcuda.so.1)."
        ),
        Some(DriverCode::CallRequiresNewerDriver) => format!(
            "the NVIDIA driver ({candidate}) is older than cudakit needs ({err}). Update the \
             NVIDIA driver (580 or newer for CUDA 13)."
        ),
        Some(DriverCode::DeviceUnavailable) => format!(
            "the GPU is busy or prohibited ({err}): another process holds it in \
             exclusive-process compute mode, or the mode is Prohibited. Check `nvidia-smi -q -d \
             COMPUTE`."
        ),
        Some(DriverCode::CompatNotSupportedOnDevice) | Some(DriverCode::SystemDriverMismatch) => {
            format!(
                "the CUDA driver library ({candidate}) does not match the kernel driver ({err}). \
                 Use the libcuda.so.1 that came with the installed kernel driver (unset \
                 CUDAKIT_LIBCUDA or remove a stale compat library from the search path)."
            )
        }
        _ => format!(
            "libcuda loaded from {candidate}, but the driver could not be initialised: {err}. \
             Check `nvidia-smi` and the kernel log (`dmesg | grep -i nvrm`)."
        ),
    }
}

fn library_json(library: &Library) -> Json {
    let attempts = |list: &[cuda_sys::Attempt]| {
        Json::Arr(
            list.iter()
                .map(|a| {
                    Json::object()
                        .with("candidate", &a.candidate)
                        .with("reason", &a.reason)
                })
                .collect(),
        )
    };
    match library {
        Library::Found(loaded) => Json::object()
            .with("found", true)
            .with("path", &loaded.candidate)
            .with("preloaded", loaded.preloaded.clone())
            .with("attempts", attempts(&loaded.skipped))
            .with("error", Json::Null),
        Library::Missing(err) => {
            let tried = match err {
                LoadError::NotFound { attempts: a, .. } => attempts(a),
                _ => Json::Arr(Vec::new()),
            };
            Json::object()
                .with("found", false)
                .with("path", Json::Null)
                .with("preloaded", Json::Null)
                .with("attempts", tried)
                .with("error", err.to_string())
        }
    }
}

fn render_library(t: &mut String, library: &Library) {
    match library {
        Library::Found(loaded) => {
            line(t, "loaded", &loaded.candidate);
            if let Some(pre) = &loaded.preloaded {
                line(t, "preloaded", pre);
            }
            if !loaded.skipped.is_empty() {
                line(
                    t,
                    "skipped",
                    &format!("{} candidate(s) before it:", loaded.skipped.len()),
                );
                for a in &loaded.skipped {
                    t.push_str(&format!("                {a}\n"));
                }
            }
        }
        Library::Missing(LoadError::NotFound { attempts, .. }) => {
            line(
                t,
                "status",
                &format!("NOT FOUND; tried {} candidate(s):", attempts.len()),
            );
            for a in attempts {
                t.push_str(&format!("                {a}\n"));
            }
        }
        Library::Missing(err) => line(t, "status", &format!("NOT LOADED: {err}")),
    }
}

/// `  label       value`.
fn line(t: &mut String, label: &str, value: &str) {
    t.push_str(&format!("  {label:<12}  {value}\n"));
}

/// A problem or note as an indented bullet, wrapped at 88 columns.
fn bullet(text: &str) -> String {
    let mut out = String::new();
    let mut current = String::from("  *");
    for word in text.split_whitespace() {
        if current.len() + 1 + word.len() > 88 && current.len() > 4 {
            out.push_str(&current);
            out.push('\n');
            current = String::from("   ");
        }
        current.push(' ');
        current.push_str(word);
    }
    out.push_str(&current);
    out.push('\n');
    out
}

/// Runs the doctor and turns it into the error `matmul` and `bench` return
/// when they cannot run: exit 2, the diagnosis as the message, the whole
/// report in the JSON object.
pub(crate) fn no_gpu_error(command: &str, cause: &Error) -> CliError {
    let report = Report::gather();
    let message = format!(
        "{command} needs an NVIDIA GPU, its driver and NVRTC: {}\n\n{}\
         (`cudakit doctor` prints the full report.)",
        short_cause(cause),
        report.diagnosis(true)
    );
    CliError::new(Exit::NoGpu, message)
        .with_json("cause", cause.to_string())
        .with_json("doctor", report.to_json())
}

/// An error in one line: a failed library search as "libcuda was not
/// found (5 places tried)", anything else as its first line.
pub(crate) fn short_cause(err: &Error) -> String {
    match err {
        Error::Load(LoadError::NotFound {
            library, attempts, ..
        }) => format!("{library} was not found; {} place(s) tried", attempts.len()),
        other => {
            let text = other.to_string();
            text.lines().next().unwrap_or_default().to_owned()
        }
    }
}

/// Whether an error means "no usable GPU, driver or NVRTC" (exit 2) rather
/// than a failure of the work itself.
pub(crate) fn is_missing_gpu(err: &Error) -> bool {
    match err {
        Error::Load(_) => true,
        Error::NoSuchDevice { count: 0, .. } => true,
        Error::Driver(e) => {
            e.call == "cuInit"
                || matches!(
                    e.code,
                    DriverCode::NoDevice
                        | DriverCode::StubLibrary
                        | DriverCode::CallRequiresNewerDriver
                        | DriverCode::DeviceUnavailable
                        | DriverCode::SystemDriverMismatch
                        | DriverCode::CompatNotSupportedOnDevice
                )
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bullets_wrap_and_indent() {
        let text = "word ".repeat(40);
        let b = bullet(&text);
        assert!(b.starts_with("  * word"));
        assert!(b.lines().count() > 1);
        assert!(b.lines().all(|l| l.len() <= 88));
        assert!(b.lines().skip(1).all(|l| l.starts_with("    ")));
    }

    #[test]
    fn missing_gpu_errors_are_classified() {
        use cuda_sys::Attempt;
        let load = Error::Load(LoadError::NotFound {
            library: "libcuda",
            attempts: vec![Attempt {
                candidate: "libcuda.so.1".into(),
                reason: "nope".into(),
            }],
            hint: "",
        });
        assert!(is_missing_gpu(&load));
        assert!(is_missing_gpu(&Error::NoSuchDevice {
            ordinal: 0,
            count: 0
        }));
        assert!(!is_missing_gpu(&Error::NoSuchDevice {
            ordinal: 3,
            count: 1
        }));
        assert!(!is_missing_gpu(&Error::InvalidArgument("x".into())));
    }
}
