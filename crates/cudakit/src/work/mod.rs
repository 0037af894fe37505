//! Work on the device: streams ([`stream`]), events ([`event`]), scopes
//! that borrow what queued work uses until it is done ([`scope`]), and the
//! checked launch path ([`launch`]).

mod arrays;
pub mod event;
pub mod launch;
pub mod scope;
pub mod stream;
