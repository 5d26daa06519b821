//! The checker's view of Battleship: the agent-visible types, queries, effects and observations.
//!
//! These signatures are all a harness can see of the game; ground truth (where the ships are) is
//! not among them. The runtime attaches implementations by name: queries by their name after
//! `game.` (see [`crate::play`]), methods by their registry name (`Posterior.observe_shot`). A
//! test checks that every signature here has an implementation there and the other way round.

use harness_compiler::signatures::{GameSig, SignatureSet};

/// The bindings of `use game battleship`.
pub fn game() -> GameSig {
    let mut g = GameSig::new(
        "battleship",
        "Noisy Collaborative Battleship: find the ships by firing at cells and asking a spotter questions.",
    );
    g.opaque("Cell", "A cell of the board, such as B4.")
        .opaque(
            "Question",
            "A yes/no question the spotter can answer: \"is there a ship cell in this region?\".",
        )
        .opaque(
            "Posterior",
            "A belief over ship placements given every shot and answer observed.",
        )
        .opaque(
            "Grid",
            "A probability per cell of the board; index it with a cell: `grid[cell]`.",
        );

    g.method("fn index(self: Cell) -> Int", "The cell's index, row * 8 + column.", "cell.index()")
        .method("fn row(self: Cell) -> Int", "The cell's row, from 0 (row A).", "cell.row()")
        .method("fn col(self: Cell) -> Int", "The cell's column, from 0 (column 1).", "cell.col()")
        .method("fn id(self: Question) -> String", "The question's id, such as `row:A`.", "q.id()")
        .method(
            "fn family(self: Question) -> String",
            "The question's family: row, column, quadrant, row-band-2, column-band-2 or block-2x2.",
            "q.family() == \"row\"",
        )
        .method(
            "fn is_coarse(self: Question) -> Bool",
            "True for rows, columns and quadrants (the coarse families).",
            "q.is_coarse()",
        )
        .method("fn is_block(self: Question) -> Bool", "True for 2×2 blocks.", "q.is_block()")
        .method("fn size(self: Question) -> Int", "The number of cells the question covers.", "q.size()")
        .method("fn index(self: Grid, cell: Cell) -> Float", "The value at a cell; written `grid[cell]`.", "hit_prob[cell]")
        .method(
            "fn hit_probabilities(self: Posterior) -> Grid",
            "For each unrevealed cell, the probability that it holds a ship (0 on revealed cells).",
            "posterior.hit_probabilities()",
        )
        .method(
            "fn p_yes(self: Posterior, q: Question) -> Float",
            "The probability that the true answer to the question is yes.",
            "posterior.p_yes(q)",
        )
        .method(
            "fn ess(self: Posterior) -> Float",
            "The effective sample size of the belief's weighted samples.",
            "posterior.ess()",
        )
        .method(
            "fn region_mass(self: Posterior, q: Question) -> Float",
            "The expected share of ship cells among the question's unrevealed cells, in [0, 1].",
            "posterior.region_mass(q)",
        )
        .method(
            "fn observe_shot(self: Posterior, cell: Cell, hit: Bool) -> Posterior",
            "The belief updated with a shot's outcome (reweighted, not resampled, inside previews).",
            "posterior.observe_shot(cell, hit)",
        )
        .method(
            "fn observe_ship(self: Posterior, cell: Cell, color: String, sunk: Bool) -> Posterior",
            "The belief updated with the colour of a hit ship and whether the shot sank it (grand protocol).",
            "posterior.observe_ship(cell, color, sunk)",
        )
        .method(
            "fn observe_answer(self: Posterior, q: Question, yes: Bool) -> Posterior",
            "The belief updated with the spotter's answer (reweighted, not resampled, inside previews).",
            "posterior.observe_answer(q, yes)",
        );

    g.query("shots_left: Int", "Shots remaining (40 at the start).", "game.shots_left > 0")
        .query("questions_left: Int", "Questions remaining (15 at the start).", "game.questions_left > 0")
        .query("turn: Int", "Shots and questions so far.", "game.turn >= 18")
        .query("hits: Int", "Shots so far that hit a ship.", "game.hits == 0")
        .query("misses: Int", "Shots so far that missed.", "game.misses")
        .query("ship_cells: Int", "Ship cells on the board (14 in the paper protocol).", "game.ship_cells")
        .query(
            "epsilon: Float",
            "The probability that the spotter flips an answer, as the agent models it.",
            "game.epsilon",
        )
        .query("won: Bool", "True once every ship cell has been hit.", "game.won")
        .query(
            "fn ship_lengths() -> List<Int>",
            "The lengths of the fleet's ships (5, 4, 3, 2 in the paper protocol; per board in grand).",
            "game.ship_lengths()",
        )
        .query(
            "ships_sunk: Int",
            "Ships known to be sunk: the grand protocol's tracker announces them; the paper's never does.",
            "game.ships_sunk",
        )
        .query(
            "largest_cluster: Int",
            "The size of the largest group of orthogonally connected hits.",
            "game.largest_cluster >= 2",
        )
        .query("fn unknown_cells() -> List<Cell>", "The cells not fired at yet, in index order.", "game.unknown_cells()")
        .query("fn hit_cells() -> List<Cell>", "The cells that were hits, in index order.", "game.hit_cells()")
        .query("fn is_unknown(cell: Cell) -> Bool", "True when the cell has not been fired at.", "game.is_unknown(cell)")
        .query(
            "fn questions() -> List<Question>",
            "The 83 template questions, in the reference's catalogue order.",
            "game.questions()",
        )
        .query(
            "fn frontier() -> List<Cell>",
            "Unknown cells next to a hit, in index order (neighbours of sunk ships included).",
            "game.frontier()",
        )
        .query(
            "fn open_frontier() -> List<Cell>",
            "Unknown cells next to a hit of a ship not known to be sunk.",
            "game.open_frontier()",
        )
        .query(
            "fn cluster_relevance(q: Question) -> Float",
            "How well the question's rows or columns line up with a hit cluster, in [0, 1].",
            "game.cluster_relevance(q)",
        )
        .query(
            "fn prior(particles: Int, backend: String) -> Posterior",
            "A fresh belief with this many samples: backend `mcmc` (correct), `smc` or `mcmc-compat` (the reference's sampler).",
            "game.prior(500, \"mcmc\")",
        );

    // The sizes the checker's cost bound of a turn uses: no cell list is longer than the board,
    // the catalogue has its fixed length, and no count of cells passes the board's.
    let cells = u64::from(crate::cell::BOARD_SIZE) * u64::from(crate::cell::BOARD_SIZE);
    for list in [
        "unknown_cells",
        "hit_cells",
        "frontier",
        "open_frontier",
        "ship_lengths",
    ] {
        g.bound(list, cells);
    }
    g.bound("questions", crate::questions::CATALOGUE_LEN as u64);
    // A set of cells or of questions (or a map keyed by them) holds each at most once.
    g.distinct("Cell", cells);
    g.distinct("Question", crate::questions::CATALOGUE_LEN as u64);
    for count in [
        "hits",
        "misses",
        "ship_cells",
        "largest_cluster",
        "ships_sunk",
    ] {
        g.bound(count, cells);
    }

    g.effect(
        "fn fire(cell: Cell)",
        "Fire at a cell; the game answers with a `shot` observation.",
    )
    .effect(
        "fn ask(q: Question)",
        "Ask the spotter a question; the game answers with an `answer` observation.",
    );
    g.observation(
        "fn shot(cell: Cell, hit: Bool)",
        "The outcome of firing at a cell.",
    )
    .observation(
        "fn ship(cell: Cell, color: String, sunk: Bool)",
        "Grand protocol only, after a hit: the colour of the ship hit and whether the shot sank it.",
    )
    .observation(
        "fn answer(q: Question, yes: Bool)",
        "The spotter's (possibly flipped) answer to a question.",
    );
    g
}

/// The game's bindings as a signature set, ready to be merged with the standard library's.
pub fn signatures() -> SignatureSet {
    let mut set = SignatureSet::default();
    set.game(game());
    set
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use harness_runtime::GameKind;

    use crate::play::Battleship;

    #[test]
    fn every_binding_parses() {
        let game = super::game();
        assert!(game.problems.is_empty(), "{:?}", game.problems);
    }

    #[test]
    fn every_method_has_a_native_and_every_native_a_signature() {
        let declared: BTreeSet<String> = super::game()
            .builtins
            .iter()
            .map(|builtin| builtin.name.clone())
            .collect();
        let natives = Battleship.natives();
        let implemented: BTreeSet<String> = natives.names().map(str::to_owned).collect();
        assert_eq!(declared, implemented);
    }
}
