//! Work on the device: streams ([`stream`]), events ([`event`]), scopes
//! that borrow what queued work uses until it is done ([`scope`]), and the
//! checked launch path ([`launch`]), L2 persistence windows ([`l2`]),
//! batched copies ([`batch`]), and futures of the GPU's work ([`future`]).

mod arrays;
pub mod batch;
pub mod callback;
pub mod event;
pub mod future;
pub mod graph;
pub mod l2;
pub mod launch;
pub mod scope;
pub mod stream;

/// The stream side of stream-ordered memory (`crate::memory::MemPool`):
/// memory knows streams only through this trait.
impl crate::memory::Sealed for stream::Stream<'_> {}
impl crate::memory::OrderedStream for stream::Stream<'_> {
    fn context(&self) -> &crate::Context {
        stream::Stream::context(self)
    }
    fn as_raw(&self) -> cuda_sys::CUstream {
        stream::Stream::as_raw(self)
    }
    fn capture_state(&self) -> crate::context::stream_state::SharedStreamState {
        crate::context::stream_state::SharedStreamState(self.state().clone())
    }
}
