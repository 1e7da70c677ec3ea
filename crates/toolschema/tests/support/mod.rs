//! Shared by the test and benchmark targets: where the project's shared fixtures are.

use std::path::PathBuf;

/// The shared fixtures folder (JSON Schema Test Suite, real catalogs): `$TOOLSCHEMA_SHARED_DIR`, or
/// `shared/` beside the checkout.
pub fn shared_dir() -> PathBuf {
    let dir = std::env::var_os("TOOLSCHEMA_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    assert!(
        dir.is_dir(),
        "shared fixtures not found at {} (set TOOLSCHEMA_SHARED_DIR)",
        dir.display()
    );
    dir
}
