//! The sample's API types, laid out as `<group>/<version>` like Go's `pkg/apis`.
//!
//! Hand-written; `hack/update-codegen.sh` reads them and writes `src/generated`.

pub mod apps;
pub mod core;
pub mod events;
pub mod samplecontroller;
