//! The `grid` game's simulator: the IEEE 14-bus network under daily load profiles.

pub mod case14;
pub mod flow;
pub mod knowledge;
pub mod oracle;
pub mod scenario;
pub mod twin;
