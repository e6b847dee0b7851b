//! +groupName=extensions.example.com
//! +groupGoName=ExtensionsExample
pub mod plugin;
