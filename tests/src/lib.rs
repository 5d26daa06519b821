//! The data-driven test corpus: .harness cases with inline expectations and snapshots.
