//! Link arguments for a Node-API module (on macOS, node's symbols are resolved at load time).

fn main() {
    napi_build::setup();
}
