//! The sample's API types, laid out as `<group>/<version>` like Go's `pkg/apis`.
//!
//! Hand-written; `hack/update-codegen.sh` reads them and writes `src/generated`.

pub mod samplecontroller;
