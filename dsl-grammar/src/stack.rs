//! Stack safety for the recursive walks over syntax trees and programs.
//!
//! The parser, the checker, the formatter, the lowering and the interpreter walk trees
//! recursively. The parser bounds the trees' nesting ([`crate::MAX_DEPTH`]) and height
//! ([`crate::MAX_HEIGHT`]), but a debug build's frames are large and a caller's thread may have
//! as little as the 2 MiB of a test or worker thread, so each recursive step runs through
//! [`guarded`], which moves to a fresh stack segment when the current one is nearly used up.

/// How much stack must remain before a recursive step, in bytes: more than any one step uses
/// between two calls of [`guarded`], even in a debug build.
const RED_ZONE: usize = 256 << 10;

/// The size of each fresh stack segment.
const SEGMENT: usize = 8 << 20;

/// Runs `f`, on a fresh stack segment when less than the red zone is left on this one.
pub fn guarded<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}
