//! The `cooling` game's simulator: a liquid-cooled data hall (one CDU loop, 20 cold plates).

pub mod knowledge;
pub mod oracle;
pub mod plant;
pub mod scenario;
pub mod twin;

pub use plant::{Inputs, PLATES, Params, STATE_LEN};
pub use scenario::{DURATION, SAMPLE, SCENARIOS, Scenario, plate_name};
