//! The launch path: a configuration validated against the device's and the
//! function's limits before the driver sees it, parameters marshaled
//! explicitly ([`params`]) and checked against the kernel's own parameter
//! table, then one driver call.
//!
//! # What is checked, and what cannot be
//!
//! Checked before the driver is entered, each violation a typed error:
//! - every grid, block and cluster dimension is at least 1, within the
//!   device's maxima, and the block's thread count within the device's and
//!   the function's (register-limited) maximum;
//! - dynamic plus static shared memory within the device's opt-in maximum;
//!   above the function's current limit (48 KiB by default) the limit is
//!   raised (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`) first;
//! - a cluster divides the grid, fits the portable cluster size (8) and
//!   needs a device with cluster launch; a cooperative grid fits on the
//!   device at once (occupancy × multiprocessors);
//! - the argument count and each argument's size against
//!   `cuFuncGetParamInfo` (CUDA 12.4+), read once per function. Where the
//!   driver lacks it, the check is reported as unavailable
//!   ([`ParamCheck::Unavailable`]), never faked;
//! - each argument's C type against the parameter's type, where the kernel's
//!   types are known ([`Function::signature`]: its mangled name, a signature
//!   declared with [`Module::function_with_signature`](crate::Module::function_with_signature),
//!   or the module's PTX): an `f32` where the kernel takes an `int`, a
//!   buffer of `f64` for a `const float*`, a struct of another name are
//!   [`Error::ArgumentType`]. The types were reduced to small rules when the
//!   function was looked up; a launch compares constants;
//! - argument kinds, at compile time: only plain data, cudakit buffers,
//!   textures, surfaces and tensor maps can be arguments (not their raw
//!   addresses, handles or descriptor bytes), and each stays borrowed
//!   (exclusively where the host can see the memory, or a kernel writes it
//!   through a surface) until the [`Scope`] has synchronized.
//!
//! Not checkable: what the kernel does with its pointers (how far it
//! indexes, whether it writes through one it should only read), and the
//! types of a kernel whose signature cudakit cannot know (an `extern "C"`
//! kernel of a CUBIN with no declared signature: sizes only, and
//! [`Function::describe_params`] says so), or of an argument passed through
//! the untyped escape ([`ParamList::push_untyped`]). Hence [`Scope::launch`]
//! is `unsafe`, and its contract says exactly that.

pub mod params;

use cuda_sys::{
    CUlaunchAttribute, CUlaunchAttributeID, CUlaunchAttributeValue, CUlaunchConfig, CUresult,
};
use once_cell::sync::Lazy;

pub use params::{ArgKind, ArgType, Container, KernelArg, ParamDescription, ParamList};

use crate::compile::module::Function;
pub use crate::compile::module::ParamCheck;
use crate::context::{same_context, Context};
use crate::error::{Error, LaunchConfigError, Result};
use crate::work::l2::AccessPolicyWindow;
use crate::work::scope::{Scope, Timed};
use crate::work::stream::Stream;
use params::PointerArray;

/// Three dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dim3 {
    /// x
    pub x: u32,
    /// y
    pub y: u32,
    /// z
    pub z: u32,
}

impl Dim3 {
    /// The product of the three.
    pub fn volume(&self) -> u64 {
        u64::from(self.x) * u64::from(self.y) * u64::from(self.z)
    }
}

impl From<u32> for Dim3 {
    fn from(x: u32) -> Self {
        Dim3 { x, y: 1, z: 1 }
    }
}
impl From<(u32, u32)> for Dim3 {
    fn from((x, y): (u32, u32)) -> Self {
        Dim3 { x, y, z: 1 }
    }
}
impl From<(u32, u32, u32)> for Dim3 {
    fn from((x, y, z): (u32, u32, u32)) -> Self {
        Dim3 { x, y, z }
    }
}

/// How a kernel is launched.
// `repr(C)`, in this order: what every launch reads (the dimensions, the
// shared bytes, the flags and the three attributes' tags, the window's
// inside it at byte 20) lies within 48 of the 80 bytes, bytes 20 to 68,
// instead of at both ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct LaunchConfig {
    /// An L2 access-policy window for this launch
    /// (`CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW`, see [`crate::work::l2`]).
    pub access_policy: Option<AccessPolicyWindow>,
    /// A launch priority (lower is higher), overriding the stream's.
    pub priority: Option<i32>,
    /// Blocks in the grid.
    pub grid: Dim3,
    /// Threads in a block.
    pub block: Dim3,
    /// Dynamic shared memory per block, in bytes.
    pub shared_bytes: u32,
    /// A cooperative launch (grid-wide synchronization).
    pub cooperative: bool,
    /// Programmatic dependent launch (sm_90 and newer,
    /// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`): the kernel
    /// may start before the previous kernel on the stream has finished;
    /// see [`LaunchConfig::programmatic`].
    pub programmatic: bool,
    /// Thread-block cluster dimensions (sm_90 and newer).
    pub cluster: Option<Dim3>,
}

impl LaunchConfig {
    /// A grid of `grid` blocks of `block` threads.
    pub fn new(grid: impl Into<Dim3>, block: impl Into<Dim3>) -> Self {
        LaunchConfig {
            grid: grid.into(),
            block: block.into(),
            shared_bytes: 0,
            cluster: None,
            cooperative: false,
            priority: None,
            programmatic: false,
            access_policy: None,
        }
    }

    /// One thread per element of `n`, in blocks of `block` threads.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for `n == 0`, `block == 0` or more blocks
    /// than a grid dimension holds (2³¹ − 1).
    pub fn for_elements(n: usize, block: u32) -> Result<Self> {
        Ok(Self::new(blocks_for(n, block, "n")?, block))
    }

    /// One thread per element of a `width` × `height` array, in blocks of
    /// `block`.
    ///
    /// # Errors
    ///
    /// As [`LaunchConfig::for_elements`].
    pub fn for_elements_2d(width: usize, height: usize, block: (u32, u32)) -> Result<Self> {
        Ok(Self::new(
            (
                blocks_for(width, block.0, "width")?,
                blocks_for(height, block.1, "height")?,
            ),
            block,
        ))
    }

    /// One thread per element of a `width` × `height` × `depth` array.
    ///
    /// # Errors
    ///
    /// As [`LaunchConfig::for_elements`].
    pub fn for_elements_3d(
        width: usize,
        height: usize,
        depth: usize,
        block: (u32, u32, u32),
    ) -> Result<Self> {
        Ok(Self::new(
            (
                blocks_for(width, block.0, "width")?,
                blocks_for(height, block.1, "height")?,
                blocks_for(depth, block.2, "depth")?,
            ),
            block,
        ))
    }

    /// With `bytes` of dynamic shared memory per block.
    pub fn shared(mut self, bytes: u32) -> Self {
        self.shared_bytes = bytes;
        self
    }

    /// With thread-block clusters of `dims` blocks.
    pub fn cluster(mut self, dims: impl Into<Dim3>) -> Self {
        self.cluster = Some(dims.into());
        self
    }

    /// As a cooperative launch.
    pub fn cooperative(mut self) -> Self {
        self.cooperative = true;
        self
    }

    /// With a launch priority.
    pub fn priority(mut self, priority: i32) -> Self {
        self.priority = Some(priority);
        self
    }

    /// As a programmatic dependent launch (sm_90 and newer): the kernel may
    /// start while the kernel before it on the stream is still running.
    /// Its blocks must wait for that kernel's results with
    /// `griddepcontrol.wait` (CUDA C++: `cudaGridDependencySynchronize()`)
    /// before they read them; the kernel before it may let it start early
    /// with `griddepcontrol.launch_dependents`
    /// (`cudaTriggerProgrammaticLaunchCompletion()`), and without that, it
    /// starts when that kernel's blocks have all exited, as a plain launch
    /// would. See `kernels/pdl.cu`. A device below compute capability 9.0
    /// refuses it with [`Error::NotSupported`] (never a silent plain
    /// launch).
    pub fn programmatic(mut self) -> Self {
        self.programmatic = true;
        self
    }

    /// With an L2 access-policy window for this launch (see
    /// [`crate::work::l2`]).
    pub fn access_policy(mut self, window: AccessPolicyWindow) -> Self {
        self.access_policy = Some(window);
        self
    }
}

fn blocks_for(n: usize, block: u32, what: &str) -> Result<u32> {
    if n == 0 || block == 0 {
        return Err(Error::InvalidArgument(format!(
            "launch configuration for {what} = {n} elements in blocks of {block}: both must be at least 1"
        )));
    }
    let blocks = n.div_ceil(block as usize);
    u32::try_from(blocks)
        .ok()
        .filter(|&b| b <= i32::MAX as u32)
        .ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{what} = {n} needs {blocks} blocks, more than a grid holds"
            ))
        })
}

impl Function<'_> {
    /// Checks `params` against the kernel's parameter table: the count,
    /// then each argument's C type against the parameter's type (where the
    /// [signature](Function::signature) knows it), then each size.
    ///
    /// The types were reduced to small rules when the function was looked
    /// up; each argument's C type is a constant of its Rust type. The check
    /// compares those, so it costs a few integer comparisons per argument.
    ///
    /// # Errors
    ///
    /// [`Error::ArgumentCount`], [`Error::ArgumentType`],
    /// [`Error::ArgumentMismatch`], or [`Error::InvalidArgument`] for an
    /// argument that could not be stored.
    #[inline]
    pub fn check_params(&self, params: &ParamList<'_>) -> Result<()> {
        if self.params_fit(params) {
            return Ok(());
        }
        self.check_params_in_full(params)
    }

    /// The common case of [`Function::check_params`], inlined into the
    /// launch path: a kernel whose sizes are already known, and arguments
    /// that fit them (and its types, where those are known), in one pass.
    /// `false` sends the launch to the full check, which reports a mismatch
    /// (and passes what this pass does not cover, such as a driver without
    /// `cuFuncGetParamInfo`).
    #[inline(always)]
    fn params_fit(&self, params: &ParamList<'_>) -> bool {
        if params.error().is_some() {
            return false;
        }
        let Some(ParamCheck::Available(expected)) = self.param_check_read() else {
            return false;
        };
        if expected.len() != params.len() {
            return false;
        }
        let rules = self.signature().rules();
        if rules.len() == params.len() {
            params
                .types()
                .zip(rules)
                .zip(expected)
                .all(|(((ty, size), rule), &(_, want))| size == want && rule.accepts(ty, size))
        } else {
            params
                .sizes()
                .zip(expected)
                .all(|(got, &(_, want))| got == want)
        }
    }

    /// [`Function::check_params`] for arguments the one-pass check did not
    /// pass: every check in order, the first failure reported.
    #[cold]
    #[inline(never)]
    fn check_params_in_full(&self, params: &ParamList<'_>) -> Result<()> {
        if let Some(msg) = params.error() {
            return Err(Error::InvalidArgument(format!("{}: {msg}", self.name())));
        }
        let signature = self.signature();
        let rules = signature.rules();
        let table = self.param_check()?;
        let expected = match table {
            ParamCheck::Available(expected) => Some(expected.len()),
            ParamCheck::Unavailable => signature.is_known().then_some(rules.len()),
        };
        if let Some(expected) = expected {
            if expected != params.len() {
                return Err(Error::ArgumentCount {
                    function: self.name().to_owned(),
                    expected,
                    got: params.len(),
                });
            }
        }
        if rules.len() == params.len() {
            for (index, ((ty, size), rule)) in params.types().zip(rules.iter()).enumerate() {
                if !rule.accepts(ty, size) {
                    return Err(self.type_error(index, params));
                }
            }
        }
        if let ParamCheck::Available(expected) = table {
            for (index, (&(_, want), got)) in expected.iter().zip(params.sizes()).enumerate() {
                if want != got {
                    return Err(Error::ArgumentMismatch {
                        function: self.name().to_owned(),
                        index,
                        expected_size: want,
                        got_size: got,
                    });
                }
            }
        }
        Ok(())
    }

    #[cold]
    fn type_error(&self, index: usize, params: &ParamList<'_>) -> Error {
        Error::ArgumentType {
            function: self.name().to_owned(),
            index,
            expected: self
                .signature()
                .params()
                .get(index)
                .map_or_else(|| "unknown".to_owned(), |p| p.describe()),
            got: params.describe_arg(index),
        }
    }

    /// The audit table of `params` for this kernel: one row per argument,
    /// with the Rust type the argument has beside the C type the kernel's
    /// parameter has (and where that type comes from), then the size,
    /// alignment, offset, the pointer handed to the driver, and the value's
    /// bytes. A kernel whose types are unknown (an `extern "C"` kernel of a
    /// CUBIN, with no declared signature) says so: only sizes are checked.
    pub fn describe_params(&self, params: &ParamList<'_>) -> String {
        let signature = self.signature();
        let mut out = format!(
            "{}: parameter types from {}\n",
            self.name(),
            signature.source()
        );
        out.push_str("idx  size align offset pointer             rust -> C / value bytes\n");
        for d in params.describe() {
            let c_type = signature
                .params()
                .get(d.index)
                .map_or_else(|| "unknown".to_owned(), |p| p.describe());
            out.push_str(&format!(
                "{:>3} {:>5} {:>5} {:>6} {:#018x}  {} -> {} = {}\n",
                d.index,
                d.size,
                d.align,
                d.offset,
                d.pointer,
                d.arg_type.describe(d.type_name),
                c_type,
                d.bytes_hex
            ));
        }
        out
    }

    /// [`Function::check_params`], then that every buffer argument is
    /// reachable from `ctx`, the context the kernel runs in: what a launch
    /// and a graph kernel node both check before their configuration.
    ///
    /// # Errors
    ///
    /// As [`Function::check_params`]; [`Error::ArgumentContextMismatch`].
    #[inline]
    pub(crate) fn check_args(&self, ctx: &Context, params: &ParamList<'_>) -> Result<()> {
        self.check_params(params)?;
        if let Some((index, argument_device)) = params.foreign_argument(ctx) {
            return Err(Error::ArgumentContextMismatch {
                function: self.name().to_owned(),
                index,
                argument_device,
                kernel_device: ctx.device().ordinal(),
            });
        }
        Ok(())
    }

    /// [`Function::validate`], skipped when `config` is the last plain
    /// configuration (no cluster, cooperative or window attribute) this
    /// function validated and nothing changed the
    /// function's attributes since (see
    /// [`ConfigCache`](crate::compile::module::ConfigCache)).
    #[inline]
    pub(crate) fn validate_cached(&self, config: &LaunchConfig) -> Result<()> {
        let cache = &self.state.validated;
        match config_key(config) {
            Some(key) if cache.holds(&key) => Ok(()),
            Some(key) => {
                // Stored only if nothing changed the cache (an attribute
                // change clears it) while this validated.
                let since = cache.sequence();
                self.validate(config)?;
                cache.store(since, &key);
                Ok(())
            }
            None => self.validate(config),
        }
    }

    /// Validates `config` against the device's and this function's limits,
    /// raising the function's dynamic shared-memory limit when more than
    /// its current one is asked for and the device allows it.
    ///
    /// # Errors
    ///
    /// [`Error::LaunchConfig`] naming the limit and the value; driver errors.
    pub fn validate(&self, config: &LaunchConfig) -> Result<()> {
        let ctx = self.context();
        let fail = |error| Error::LaunchConfig {
            function: self.name().to_owned(),
            error,
        };
        let dev = ctx.limits();

        let grid = [config.grid.x, config.grid.y, config.grid.z];
        let block = [config.block.x, config.block.y, config.block.z];
        for i in 0..3 {
            if grid[i] == 0 {
                return Err(fail(LaunchConfigError::Zero { what: GRID[i] }));
            }
            if block[i] == 0 {
                return Err(fail(LaunchConfigError::Zero { what: BLOCK[i] }));
            }
            if block[i] > dev.max_block_dim[i] {
                return Err(fail(over(
                    BLOCK[i],
                    block[i],
                    dev.max_block_dim[i],
                    BLOCK_ATTR[i],
                )));
            }
            if grid[i] > dev.max_grid_dim[i] {
                return Err(fail(over(
                    GRID[i],
                    grid[i],
                    dev.max_grid_dim[i],
                    GRID_ATTR[i],
                )));
            }
        }
        let threads = config.block.volume();
        if threads > u64::from(dev.max_threads_per_block) {
            return Err(fail(LaunchConfigError::OverLimit {
                what: "threads per block",
                value: threads,
                limit: u64::from(dev.max_threads_per_block),
                source_of_limit: "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK",
            }));
        }
        let f = self.launch_limits()?;
        if threads > u64::from(f.max_threads) {
            return Err(fail(LaunchConfigError::OverLimit {
                what: "threads per block",
                value: threads,
                limit: u64::from(f.max_threads),
                source_of_limit: "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK (register use)",
            }));
        }
        let total_shared = u64::from(f.static_shared) + u64::from(config.shared_bytes);
        if total_shared > u64::from(dev.max_shared_per_block_optin) {
            return Err(fail(LaunchConfigError::OverLimit {
                what: "static + dynamic shared memory per block",
                value: total_shared,
                limit: u64::from(dev.max_shared_per_block_optin),
                source_of_limit: "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
            }));
        }
        self.ensure_dynamic_shared(config.shared_bytes)?;
        if let Some(cluster) = config.cluster {
            if !dev.cluster_launch {
                return Err(Error::NotSupported {
                    feature: "thread-block clusters (CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH)",
                    needs_driver: "a device of compute capability 9.0",
                });
            }
            let c = [cluster.x, cluster.y, cluster.z];
            for (i, axis) in ['x', 'y', 'z'].into_iter().enumerate() {
                if c[i] == 0 {
                    return Err(fail(LaunchConfigError::Zero { what: CLUSTER[i] }));
                }
                if grid[i] % c[i] != 0 {
                    return Err(fail(LaunchConfigError::ClusterDoesNotDivideGrid {
                        axis,
                        grid: grid[i],
                        cluster: c[i],
                    }));
                }
            }
            if cluster.volume() > PORTABLE_CLUSTER_SIZE {
                return Err(fail(LaunchConfigError::OverLimit {
                    what: "blocks per cluster",
                    value: cluster.volume(),
                    limit: PORTABLE_CLUSTER_SIZE,
                    source_of_limit: "the portable cluster size of CUDA",
                }));
            }
        }
        if config.programmatic && dev.compute_capability.0 < 9 {
            return Err(Error::NotSupported {
                feature: "programmatic dependent launch (CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)",
                needs_driver: "a device of compute capability 9.0",
            });
        }
        if let Some(w) = &config.access_policy {
            w.check(ctx)?;
        }
        if config.cooperative {
            if !dev.cooperative_launch {
                return Err(Error::NotSupported {
                    feature: "cooperative launch (CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)",
                    needs_driver: "a device with cooperative launch",
                });
            }
            let per_sm =
                self.max_active_blocks_per_multiprocessor(threads as u32, config.shared_bytes)?;
            let limit = u64::from(per_sm) * u64::from(dev.multiprocessors);
            if config.grid.volume() > limit {
                return Err(fail(LaunchConfigError::OverLimit {
                    what: "blocks in a cooperative grid",
                    value: config.grid.volume(),
                    limit,
                    source_of_limit:
                        "cuOccupancyMaxActiveBlocksPerMultiprocessor × multiprocessors",
                }));
            }
        }
        Ok(())
    }

    /// Blocks of `block_threads` threads and `shared_bytes` dynamic shared
    /// memory that fit on one multiprocessor at once
    /// (`cuOccupancyMaxActiveBlocksPerMultiprocessor`).
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn max_active_blocks_per_multiprocessor(
        &self,
        block_threads: u32,
        shared_bytes: u32,
    ) -> Result<u32> {
        let ctx = self.context();
        let cu = ctx.enter()?;
        let mut blocks = 0;
        // SAFETY: a valid out-pointer and a live function.
        ctx.check("cuOccupancyMaxActiveBlocksPerMultiprocessor", unsafe {
            (cu.cuOccupancyMaxActiveBlocksPerMultiprocessor)(
                &mut blocks,
                self.as_raw(),
                block_threads as i32,
                shared_bytes as usize,
            )
        })?;
        Ok(blocks.max(0) as u32)
    }

    /// The block size that maximizes occupancy for `shared_bytes` of dynamic
    /// shared memory per block, and the smallest grid that reaches it
    /// (`cuOccupancyMaxPotentialBlockSize`), as (grid, block).
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn suggested_block_size(&self, shared_bytes: u32) -> Result<(u32, u32)> {
        let ctx = self.context();
        let cu = ctx.enter()?;
        let (mut grid, mut block) = (0, 0);
        // SAFETY: valid out-pointers, a live function, no size callback.
        ctx.check("cuOccupancyMaxPotentialBlockSize", unsafe {
            (cu.cuOccupancyMaxPotentialBlockSize)(
                &mut grid,
                &mut block,
                self.as_raw(),
                None,
                shared_bytes as usize,
                0,
            )
        })?;
        Ok((grid.max(0) as u32, block.max(0) as u32))
    }

    /// The largest cooperative grid of `block_threads`-thread blocks: every
    /// block resident at once.
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn max_cooperative_grid(&self, block_threads: u32, shared_bytes: u32) -> Result<u32> {
        let per_sm = self.max_active_blocks_per_multiprocessor(block_threads, shared_bytes)?;
        Ok(per_sm * self.context().limits().multiprocessors)
    }
}

const GRID: [&str; 3] = ["grid.x", "grid.y", "grid.z"];
const BLOCK: [&str; 3] = ["block.x", "block.y", "block.z"];
const CLUSTER: [&str; 3] = ["cluster.x", "cluster.y", "cluster.z"];
const GRID_ATTR: [&str; 3] = [
    "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X",
    "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y",
    "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z",
];
const BLOCK_ATTR: [&str; 3] = [
    "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X",
    "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y",
    "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z",
];
const PORTABLE_CLUSTER_SIZE: u64 = 8;

fn over(
    what: &'static str,
    value: u32,
    limit: u32,
    source_of_limit: &'static str,
) -> LaunchConfigError {
    LaunchConfigError::OverLimit {
        what,
        value: u64::from(value),
        limit: u64::from(limit),
        source_of_limit,
    }
}

static TRACE: Lazy<bool> =
    Lazy::new(|| std::env::var_os("CUDAKIT_TRACE_LAUNCH").is_some_and(|v| v == "1"));

/// Whether launches trace or emit NVTX ranges: never on the fast path.
static LAUNCH_EXTRAS: Lazy<bool> = Lazy::new(|| *TRACE || crate::nvtx::auto_on());

impl<'s, 'env> Scope<'s, 'env> {
    /// Launches `function` on `stream` with `config` and `params`, after
    /// checking both (see the [module documentation](self)). Buffers in
    /// `params` stay borrowed until the scope has synchronized.
    /// `CUDAKIT_TRACE_LAUNCH=1` prints the parameter table of every launch
    /// to stderr.
    ///
    /// Plain launches go through `cuLaunchKernel`; clusters, priorities
    /// and cooperative launches through `cuLaunchKernelEx` (cooperative
    /// falls back to `cuLaunchCooperativeKernel` where `cuLaunchKernelEx`
    /// is missing).
    ///
    /// # Safety
    ///
    /// The kernel must do with its arguments only what their types allow:
    /// stay within the bounds of every buffer it is given, not write
    /// through a buffer it was given for reading where that memory is
    /// host-visible (a shared `&UnifiedBuffer` cannot be an argument, but a
    /// kernel can compute any address), and take parameters whose types,
    /// not only sizes, match the arguments. cudakit checks the types where
    /// it knows the kernel's ([`Function::signature`]); where it does not
    /// (an `extern "C"` kernel of a CUBIN or linked module with no declared
    /// signature), and for every argument passed through the untyped escape
    /// ([`ParamList::push_untyped`] / [`ParamList::arg_untyped`], which pass
    /// a value as bytes whose size alone is checked: the way to give a raw
    /// address, or bytes for a parameter type cudakit cannot name), matching
    /// types is the caller's obligation. A raw address passed as a
    /// number (`DevicePtr::as_raw`, or any `u64` that a kernel treats as a
    /// pointer) is a plain value to cudakit: the caller must keep the memory
    /// it points at alive, of the kernel's context (or a peer the kernel
    /// may reach), and unaliased by host access until the scope has
    /// synchronized; buffers passed as themselves get all of that checked.
    ///
    /// Raw object handles and descriptor bytes are plain values in the same
    /// way: a texture or surface object's handle passed as a number
    /// (`TextureHandle::as_raw`, `SurfaceHandle::as_raw`, any `u64` that a
    /// kernel treats as a `cudaTextureObject_t` or `cudaSurfaceObject_t`), and
    /// a tensor map's bytes passed by value (`TensorMapDescriptor::as_raw`
    /// and its `opaque` words, any 128 bytes a kernel treats as a
    /// `CUtensorMap`). For each, the caller must keep the object (the
    /// [`Texture`](crate::Texture), [`Surface`](crate::Surface) or
    /// [`TensorMap`](crate::memory::tensor_map::TensorMap)) and the memory
    /// it reads or writes alive until the scope has synchronized; a texture
    /// or surface object must have been made in the kernel's context (an
    /// object is valid only there: peer access does not extend it), and a
    /// tensor map's memory must be reachable from it; and memory written
    /// through a surface handle or a tensor map must not be read or written
    /// by the host or other work meanwhile.
    /// Objects passed as themselves (`&texture`, `&mut surface`, `&map`)
    /// get all of that checked.
    ///
    /// With [`LaunchConfig::programmatic`], the kernel may start before the
    /// kernel queued before it on the stream has finished: it must execute
    /// `griddepcontrol.wait` (`cudaGridDependencySynchronize()`) before it
    /// reads anything that kernel writes, or writes anything it reads.
    ///
    /// cudakit checks everything it can see; this is what it cannot.
    ///
    /// # Errors
    ///
    /// [`Error::LaunchConfig`], [`Error::ArgumentCount`],
    /// [`Error::ArgumentType`], [`Error::ArgumentMismatch`],
    /// [`Error::NotSupported`],
    /// [`Error::ContextMismatch`], [`Error::ArgumentContextMismatch`] (a
    /// buffer of another device whose memory this context has no peer
    /// access to: see `Context::enable_peer_access`), driver errors; a
    /// poisoned context.
    #[inline]
    pub unsafe fn launch(
        &self,
        stream: &'s Stream<'_>,
        function: &'s Function<'_>,
        config: &LaunchConfig,
        params: &ParamList<'s>,
    ) -> Result<()> {
        // SAFETY: the caller's contract, passed on.
        if let Some(done) = unsafe { self.launch_fast(stream, function, config, params) } {
            return done;
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { self.launch_checked(stream, function, config, params) }
    }

    /// The launch path's common case, every check of
    /// [`Scope::launch_checked`] made against what earlier launches
    /// established: a plain or programmatic configuration that this
    /// function validated last, arguments of the kernel's context that fit
    /// its parameters, the scope's one stream (used before, not captured,
    /// no host function or barrier pending on it), this context current
    /// on the thread by cudakit's own record, not poisoned, not green, no
    /// kernel timing, tracing or NVTX. `None` when any of that does not
    /// hold, before anything was queued, waited for or noted (the one
    /// thing it may have done is record, in the handle's `fitted`, a
    /// signature that passed the full parameter check, which stays true):
    /// the caller then takes the full path, which checks (and reports)
    /// everything from the start.
    ///
    /// # Safety
    ///
    /// As [`Scope::launch`].
    #[inline(always)]
    unsafe fn launch_fast(
        &self,
        stream: &'s Stream<'_>,
        function: &'s Function<'_>,
        config: &LaunchConfig,
        params: &ParamList<'s>,
    ) -> Option<Result<()>> {
        let ctx: &Context = self.context();
        if !ctx.same(function.context()) || !params.all_plain_of(ctx.id()) {
            return None;
        }
        // The configuration as `validate_cached` takes it from the cache
        // (no cluster, cooperative or window attribute), and the arguments
        // as `check_args` passes them (one pass, sizes and types).
        let key = config_key(config)?;
        if !function.state.validated.holds(&key) {
            return None;
        }
        let sig = params.sig();
        if !function.fitted.holds(sig) {
            if !function.params_fit(params) {
                return None;
            }
            function.fitted.store(sig);
        }
        // `launch_driver_fast` is `None` until a full-path launch armed the
        // table, which it does only without tracing and NVTX.
        if ctx.kernel_timing() {
            return None;
        }
        let cu = ctx.launch_driver_fast()?;
        // Last: takes the stream's capture lock (held until the driver
        // call has returned) and notes the arguments' memory as used.
        let raw_stream = self.use_stream_fast(stream, params)?;
        let mut pointers = PointerArray::new();
        params.pointers(&mut pointers);
        let kernel_params = pointers.as_mut_ptr();
        let (raw_function, raw) = (function.as_raw(), *raw_stream);
        // `config_key` refused clusters, cooperative launches and windows:
        // the rest of `cuLaunchKernelEx`'s attributes.
        let needs_ex = config.priority.is_some() || config.programmatic;
        let (call, rc) = if needs_ex {
            // SAFETY: `kernel_params` has one pointer per kernel parameter,
            // each at a value of that parameter's size inside `params`'
            // storage, which is borrowed across the call. The count and
            // sizes agree with the driver's parameter table because either
            // `params_fit` passed just above, or `function.fitted` holds
            // `sig`: a handle records a signature only after `params_fit`
            // passed it against that handle's table (read once, never
            // changed) and types (changed only by `declare_signature`,
            // which resets `fitted`), and lists of one signature have the
            // same count, sizes and type verdicts (`type_code`; `SIG_NONE`,
            // a list it cannot encode, is never recorded or matched). The
            // function is live (borrowed with its module or library for
            // `'s`); so is the stream, this scope's, not capturing, its
            // capture lock held until the call returns (`use_stream_fast`).
            // The configuration is one `validated` holds: the function
            // validated it, and no attribute was set since through any of
            // its handles (every set clears the shared record).
            match unsafe { launch_issue(cu, raw_function, config, raw, kernel_params, true) } {
                Ok(r) => r,
                Err(e) => return Some(Err(e)),
            }
        } else {
            // SAFETY: as above.
            unsafe { launch_plain(cu, raw_function, config, raw, kernel_params) }
        };
        if rc != CUresult::CUDA_SUCCESS {
            // SAFETY: as above; the stream's lock is still held.
            return Some(unsafe {
                self.launch_refused(call, rc, raw_function, config, raw, kernel_params, needs_ex)
            });
        }
        drop(raw_stream);
        self.count_fast_launch();
        Some(Ok(()))
    }

    /// A fast-path launch the driver refused: issued once more after a full
    /// `enter` if foreign code had switched the thread's context, as in
    /// [`Scope::launch_checked`]; else the error (a sticky one poisons).
    ///
    /// # Safety
    ///
    /// As [`launch_plain`], with the stream's capture lock held.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn launch_refused(
        &self,
        call: &'static str,
        rc: CUresult,
        raw_function: cuda_sys::CUfunction,
        config: &LaunchConfig,
        raw: cuda_sys::CUstream,
        kernel_params: *mut *mut std::ffi::c_void,
        needs_ex: bool,
    ) -> Result<()> {
        let ctx = self.context();
        // SAFETY: the caller's contract.
        let (call, rc) = unsafe {
            reissue_if_switched(
                ctx,
                true,
                (call, rc),
                raw_function,
                config,
                raw,
                kernel_params,
                needs_ex,
            )?
        };
        ctx.check(call, rc)?;
        self.count_launch();
        Ok(())
    }

    /// [`Scope::launch`]'s full path: every check from the start.
    ///
    /// # Safety
    ///
    /// As [`Scope::launch`].
    #[inline(never)]
    unsafe fn launch_checked(
        &self,
        stream: &'s Stream<'_>,
        function: &'s Function<'_>,
        config: &LaunchConfig,
        params: &ParamList<'s>,
    ) -> Result<()> {
        let _nvtx = crate::nvtx::auto(function.name());
        let ctx: &Context = self.context();
        same_context("launch", ctx, function.context())?;
        // Every check before the stream is used: a refused launch queues
        // no wait and orders nothing (a foreign buffer's stream is not
        // this context's to record on).
        function.check_args(ctx, params)?;
        params.check_conditions("launch", None)?;
        function.validate_cached(config)?;
        let raw_stream = self.use_stream_for(stream, params.device_uses())?;
        if let Some(record) = raw_stream.capture_record() {
            // A captured launch runs at each replay: the graph checks then
            // that its peer memory is still reachable.
            let mut peers = crate::context::lock(&record.peers);
            for u in params.peer_uses(ctx.id()) {
                if !peers.contains(&u) {
                    peers.push(u);
                }
            }
        }
        if *TRACE {
            eprintln!(
                "cudakit launch {} grid {:?} block {:?} shared {}:\n{}",
                function.name(),
                config.grid,
                config.block,
                config.shared_bytes,
                function.describe_params(params)
            );
        }
        let (cu, fast) = ctx.enter_for_launch()?;
        let mut pointers = PointerArray::new();
        params.pointers(&mut pointers);
        // Borrowed from `pointers`, which outlives every use below.
        let kernel_params = pointers.as_mut_ptr();
        // Kernel timing off (the default) costs one load here and one test
        // after the launch.
        let timer = if ctx.kernel_timing() {
            self.time_start(&raw_stream)?
        } else {
            None
        };
        let needs_ex = config.cluster.is_some()
            || config.priority.is_some()
            || config.cooperative
            || config.programmatic
            || config.access_policy.is_some();
        let (raw_function, raw) = (function.as_raw(), *raw_stream);
        // The plain launch is issued inline, the others through
        // `launch_issue`.
        let (mut call, mut rc) = if needs_ex {
            // SAFETY: `kernel_params` has one pointer per kernel parameter
            // (count and sizes checked above where the driver can report
            // them), each pointing at a value inside `params`' storage,
            // which is borrowed until the call returns; the function and
            // stream are live; the configuration was validated.
            unsafe { launch_issue(cu, raw_function, config, raw, kernel_params, true)? }
        } else {
            // SAFETY: as above.
            unsafe { launch_plain(cu, raw_function, config, raw, kernel_params) }
        };
        if rc != CUresult::CUDA_SUCCESS {
            // SAFETY: as above.
            (call, rc) = unsafe {
                reissue_if_switched(
                    ctx,
                    fast,
                    (call, rc),
                    raw_function,
                    config,
                    raw,
                    kernel_params,
                    needs_ex,
                )?
            };
        }
        ctx.check(call, rc)?;
        self.count_launch();
        if !*LAUNCH_EXTRAS {
            // The fast path's driver table: armed only where no launch
            // needs tracing or NVTX, so that the fast path need not ask.
            crate::driver::arm_fast(cu);
        }
        if timer.is_none() {
            return Ok(());
        }
        self.time_end(
            || Timed::Kernel(function.name().to_owned()),
            &raw_stream,
            timer,
        )
    }
}

/// A launch the driver refused with `rc` (`call` the entry point): when
/// the thread's current context was believed to be `ctx` without asking
/// the driver (`fast`) and foreign code had switched it, the refused launch
/// queued nothing, so it is issued once more after a full `enter`; else
/// `(call, rc)` as they were.
///
/// # Safety
///
/// As [`launch_plain`].
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
unsafe fn reissue_if_switched(
    ctx: &Context,
    fast: bool,
    (call, rc): (&'static str, CUresult),
    raw_function: cuda_sys::CUfunction,
    config: &LaunchConfig,
    raw_stream: cuda_sys::CUstream,
    kernel_params: *mut *mut std::ffi::c_void,
    needs_ex: bool,
) -> Result<(&'static str, CUresult)> {
    if !ctx.should_retry_elsewhere(fast, rc) {
        return Ok((call, rc));
    }
    // SAFETY: the caller's contract.
    unsafe {
        launch_issue(
            ctx.enter()?,
            raw_function,
            config,
            raw_stream,
            kernel_params,
            needs_ex,
        )
    }
}

/// The key of a plain configuration for the function's
/// [`ConfigCache`](crate::compile::module::ConfigCache); `None` for one with attributes
/// whose checks depend on more than the configuration (occupancy,
/// windows) or that are rare.
#[inline]
fn config_key(c: &LaunchConfig) -> Option<[u64; 4]> {
    if c.cluster.is_some() || c.cooperative || c.access_policy.is_some() {
        return None;
    }
    let w = |lo: u32, hi: u32| u64::from(lo) | (u64::from(hi) << 32);
    // The programmatic attribute's check depends on the device alone:
    // one bit of the key. A priority is not checked.
    Some([
        w(c.grid.x, c.grid.y),
        w(c.grid.z, c.block.x),
        w(c.block.y, c.block.z),
        // Bit 63: a key is never all zeros, the empty cache's words.
        w(c.shared_bytes, u32::from(c.programmatic) | 1 << 31),
    ])
}

/// A launch through `cuLaunchKernelEx` (with `needs_ex`: the attributes of
/// `config`), `cuLaunchCooperativeKernel` where that is missing and only
/// the cooperative attribute is asked for, or `cuLaunchKernel`: the launch
/// path's uncommon calls, out of line.
///
/// # Safety
///
/// As [`launch_plain`].
#[inline(never)]
unsafe fn launch_issue(
    cu: &'static cuda_sys::Driver,
    raw_function: cuda_sys::CUfunction,
    config: &LaunchConfig,
    raw_stream: cuda_sys::CUstream,
    kernel_params: *mut *mut std::ffi::c_void,
    needs_ex: bool,
) -> Result<(&'static str, CUresult)> {
    Ok(if !needs_ex {
        // SAFETY: the caller's contract.
        unsafe { launch_plain(cu, raw_function, config, raw_stream, kernel_params) }
    } else if let Some(ex) = cu.cuLaunchKernelEx {
        // Only the attributes asked for are written (each zeroed first, its
        // union member then set): the rest of the array is never read.
        let mut attrs = [std::mem::MaybeUninit::<CUlaunchAttribute>::uninit(); 5];
        let mut n = 0;
        let mut push = |id: CUlaunchAttributeID, set: &dyn Fn(&mut CUlaunchAttributeValue)| {
            let mut a = zero_attribute();
            a.id = id;
            set(&mut a.value);
            attrs[n].write(a);
            n += 1;
        };
        if let Some(c) = config.cluster {
            push(
                CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
                &|v| {
                    v.clusterDim.x = c.x;
                    v.clusterDim.y = c.y;
                    v.clusterDim.z = c.z;
                },
            );
        }
        if config.cooperative {
            push(CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &|v| {
                v.cooperative = 1;
            });
        }
        if let Some(p) = config.priority {
            push(CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PRIORITY, &|v| {
                v.priority = p;
            });
        }
        if config.programmatic {
            push(
                CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
                &|v| v.programmaticStreamSerializationAllowed = 1,
            );
        }
        if let Some(w) = &config.access_policy {
            push(
                CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW,
                &|v| *v = w.value(),
            );
        }
        let cfg = CUlaunchConfig {
            gridDimX: config.grid.x,
            gridDimY: config.grid.y,
            gridDimZ: config.grid.z,
            blockDimX: config.block.x,
            blockDimY: config.block.y,
            blockDimZ: config.block.z,
            sharedMemBytes: config.shared_bytes,
            hStream: raw_stream,
            // The first `n` entries, written above.
            attrs: attrs.as_mut_ptr().cast(),
            numAttrs: n as u32,
        };
        // SAFETY: the caller's contract (as `launch_plain`'s); `cfg` and
        // `attrs` (n entries, each with the union member its id names) live
        // across the call.
        let rc = unsafe { ex(&cfg, raw_function, kernel_params, std::ptr::null_mut()) };
        ("cuLaunchKernelEx", rc)
    } else if config.cooperative
        && config.cluster.is_none()
        && config.priority.is_none()
        && !config.programmatic
        && config.access_policy.is_none()
    {
        // SAFETY: the caller's contract (as `launch_plain`'s).
        let rc = unsafe {
            (cu.cuLaunchCooperativeKernel)(
                raw_function,
                config.grid.x,
                config.grid.y,
                config.grid.z,
                config.block.x,
                config.block.y,
                config.block.z,
                config.shared_bytes,
                raw_stream,
                kernel_params,
            )
        };
        ("cuLaunchCooperativeKernel", rc)
    } else {
        return Err(Error::NotSupported {
                feature: "cuLaunchKernelEx (cluster, priority, programmatic and access-policy launch attributes)",
                needs_driver: "CUDA 11.8",
            });
    })
}

/// `cuLaunchKernel` of `f` with `config` on `stream` (`extra` NULL).
///
/// # Safety
///
/// `params` holds one pointer per parameter of `f`, each to a live value of
/// the parameter's size; `f` and `stream` are live; `config` is valid for
/// `f`.
#[inline(always)]
unsafe fn launch_plain(
    cu: &'static cuda_sys::Driver,
    f: cuda_sys::CUfunction,
    config: &LaunchConfig,
    stream: cuda_sys::CUstream,
    params: *mut *mut std::ffi::c_void,
) -> (&'static str, CUresult) {
    // SAFETY: the caller's contract; the driver copies the values during
    // the call.
    let rc = unsafe {
        (cu.cuLaunchKernel)(
            f,
            config.grid.x,
            config.grid.y,
            config.grid.z,
            config.block.x,
            config.block.y,
            config.block.z,
            config.shared_bytes,
            stream,
            params,
            std::ptr::null_mut(),
        )
    };
    ("cuLaunchKernel", rc)
}

fn zero_attribute() -> CUlaunchAttribute {
    CUlaunchAttribute {
        id: CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_IGNORE,
        pad: [0; 4],
        value: CUlaunchAttributeValue { pad: [0; 64] },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_helpers_round_up_and_refuse_zero() {
        let c = LaunchConfig::for_elements(1000, 256).unwrap();
        assert_eq!((c.grid, c.block), (Dim3::from(4), Dim3::from(256)));
        let c = LaunchConfig::for_elements_2d(33, 17, (16, 16)).unwrap();
        assert_eq!(c.grid, Dim3::from((3, 2)));
        let c = LaunchConfig::for_elements_3d(8, 8, 9, (4, 4, 4)).unwrap();
        assert_eq!(c.grid, Dim3::from((2, 2, 3)));
        assert!(LaunchConfig::for_elements(0, 256).is_err());
        assert!(LaunchConfig::for_elements(10, 0).is_err());
        assert!(LaunchConfig::for_elements(usize::MAX, 1).is_err());
        let c = LaunchConfig::new(8, 128)
            .shared(1024)
            .cluster(2)
            .cooperative()
            .priority(-1);
        assert_eq!(c.cluster, Some(Dim3::from(2)));
        assert!(c.cooperative);
        assert_eq!(c.priority, Some(-1));
        assert_eq!(Dim3::from((2, 3, 4)).volume(), 24);
    }
}

#[cfg(test)]
mod config_cache_tests {
    use super::*;
    use crate::compile::module::ConfigCache;

    #[test]
    fn the_cache_holds_only_what_was_stored_since_the_last_change() {
        let c = ConfigCache::default();
        let plain = LaunchConfig::new((4, 2), 128).shared(256);
        let key = config_key(&plain).expect("plain");
        assert!(!c.holds(&key), "empty");
        let s = c.sequence();
        c.store(s, &key);
        assert!(c.holds(&key));
        let other = config_key(&LaunchConfig::new((4, 2), 128).shared(512)).unwrap();
        assert!(!c.holds(&other));
        // A change while validating: the store is dropped.
        let s = c.sequence();
        c.clear();
        c.store(s, &other);
        assert!(
            !c.holds(&other) && !c.holds(&key),
            "cleared, then a stale store"
        );
        // Configurations with attributes are never cached.
        assert!(config_key(&plain.cooperative()).is_none());
        assert_ne!(config_key(&plain.programmatic()), Some(key));
        assert!(config_key(&LaunchConfig::new(8, 64).cluster(2)).is_none());
        // An empty cache holds no key, not even an all-zero configuration's.
        let zero = config_key(&LaunchConfig::new((0, 0, 0), (0, 0, 0))).unwrap();
        assert_ne!(zero, [0; 4]);
        assert!(!ConfigCache::default().holds(&zero));
    }

    #[test]
    fn concurrent_stores_and_reads_never_see_a_mixed_configuration() {
        let c = ConfigCache::default();
        let a = config_key(&LaunchConfig::new((1, 2), (3, 4)).shared(5)).unwrap();
        let b = config_key(&LaunchConfig::new((6, 7), (8, 9)).shared(10)).unwrap();
        let mixes: Vec<[u64; 4]> = (1..15u32)
            .map(|m| std::array::from_fn(|i| if m & (1 << i) != 0 { b[i] } else { a[i] }))
            .collect();
        std::thread::scope(|t| {
            for k in [a, b] {
                let c = &c;
                t.spawn(move || {
                    for _ in 0..20_000 {
                        let s = c.sequence();
                        c.store(s, &k);
                    }
                });
            }
            let c = &c;
            t.spawn(move || {
                for _ in 0..20_000 {
                    for m in &mixes {
                        assert!(!c.holds(m), "a torn configuration was trusted");
                    }
                }
            });
        });
    }
}
