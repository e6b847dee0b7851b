//! Apply configurations: a CLI kind whose spec and status reach nested structs, keyed
//! lists, sets, atomic lists, maps, atomic maps, an atomic struct and an enum; and a
//! derive kind whose nested types derive `ApplyConfiguration`.

pub mod garden;
