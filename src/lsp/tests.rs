//! The server driven over JSON-RPC, as an editor drives it.
