//! Buffers: the element types and the memory that holds them (device,
//! pinned host, unified, stream-ordered pools, virtual memory, and memory
//! imported from another process).

/// The methods every buffer of device memory has by way of its whole view
/// (`as_view`, which each buffer defines): `view`, the host and device
/// copies and `fill`. One definition, so that a check added to a
/// `DeviceView` method holds for every buffer kind.
macro_rules! view_methods {
    () => {
        /// A sub-range as a view.
        ///
        /// # Errors
        ///
        /// [`Error::OutOfBounds`](crate::Error::OutOfBounds) or an empty range.
        pub fn view(
            &self,
            range: impl std::ops::RangeBounds<usize>,
        ) -> $crate::error::Result<$crate::memory::DeviceView<'_, T>> {
            self.as_view().view(range)
        }

        /// Copies `src` into the buffer (`cuMemcpyHtoD_v2`); lengths must match.
        ///
        /// # Errors
        ///
        /// [`Error::LengthMismatch`](crate::Error::LengthMismatch); driver errors.
        pub fn copy_from_host(&self, src: &[T]) -> $crate::error::Result<()> {
            self.as_view().copy_from_host(src)
        }

        /// Copies the buffer into `dst` (`cuMemcpyDtoH_v2`); lengths must match.
        ///
        /// # Errors
        ///
        /// [`Error::LengthMismatch`](crate::Error::LengthMismatch); driver errors.
        pub fn copy_to_host(&self, dst: &mut [T]) -> $crate::error::Result<()> {
            self.as_view().copy_to_host(dst)
        }

        /// The contents as a vector (`cuMemcpyDtoH_v2`).
        ///
        /// # Errors
        ///
        /// Driver errors.
        pub fn to_vec(&self) -> $crate::error::Result<Vec<T>> {
            self.as_view().to_vec()
        }

        /// Copies device memory into the buffer (`cuMemcpyDtoD_v2`); lengths
        /// must match; both must belong to this context.
        ///
        /// # Errors
        ///
        /// Length and context mismatches; driver errors.
        pub fn copy_from<'s>(
            &self,
            src: impl $crate::memory::DeviceSrc<'s, T>,
        ) -> $crate::error::Result<()> {
            self.as_view().copy_from(src)
        }

        /// Sets every element to `value`.
        ///
        /// # Errors
        ///
        /// Driver errors.
        pub fn fill(&self, value: T) -> $crate::error::Result<()> {
            self.as_view().fill(value)
        }
    };
}

/// `Sealed`, `DeviceSrc` and `DeviceDst` for `&$buffer` (a buffer type with
/// `ctx` and `len` fields) whose device address is its field `$ptr`: what
/// makes a buffer a copy source and destination through the same paths as
/// every other.
macro_rules! device_memory_impls {
    ($buffer:ident, $ptr:ident) => {
        impl<T: $crate::memory::DeviceCopy> $crate::memory::Sealed for &$buffer<'_, T> {}
        device_memory_impls!(@one $buffer, $ptr, DeviceSrc);
        device_memory_impls!(@one $buffer, $ptr, DeviceDst);
    };
    (@one $buffer:ident, $ptr:ident, $trait:ident) => {
        impl<'b, T: $crate::memory::DeviceCopy> $crate::memory::$trait<'b, T> for &'b $buffer<'_, T> {
            fn context(&self) -> &'b $crate::context::Context {
                self.ctx
            }
            fn device_ptr(&self) -> $crate::memory::DevicePtr {
                $crate::memory::DevicePtr::new(self.$ptr)
            }
            fn len(&self) -> usize {
                self.len
            }
        }
    };
}

pub(crate) mod device;
pub(crate) mod element;
pub(crate) mod imported;
pub(crate) mod pinned;
pub mod pool;
pub(crate) mod unified;
pub(crate) mod virtual_mem;
