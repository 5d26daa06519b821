//! The harness language's tokens, recovering parser, syntax tree and reference grammar.
