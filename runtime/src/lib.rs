//! The harness runtime: values, snapshots, interpreter, turn loop, sim.next, events and the Game trait.
