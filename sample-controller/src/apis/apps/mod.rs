//! Built-in group `apps`: the kinds the sample's controllers use.

pub mod v1;
