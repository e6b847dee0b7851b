//! Built-in core group (`v1`): the kinds the sample's controllers use.

pub mod v1;
