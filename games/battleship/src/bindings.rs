//! The checker's view of Battleship: the agent-visible types, queries, effects and observations.
//!
//! These signatures are all a harness can see of the game; ground truth (where the ships are) is
//! not among them. The runtime attaches implementations by name: queries by their name after
//! `game.`, methods by their registry name (`Posterior.observe_shot`).

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
            "A yes/no question the spotter can answer, such as \"is there a ship in row B?\".",
        )
        .opaque(
            "Posterior",
            "A belief over ship placements consistent with what has been observed.",
        )
        .opaque(
            "Grid<T>",
            "One value per cell of the board; index it with a cell: `grid[cell]`.",
        );

    g.method(
        "fn row(self: Cell) -> Int",
        "The cell's row, from 0.",
        "cell.row()",
    )
    .method(
        "fn col(self: Cell) -> Int",
        "The cell's column, from 0.",
        "cell.col()",
    )
    .method(
        "fn neighbors(self: Cell) -> List<Cell>",
        "The up to four orthogonally adjacent cells.",
        "cell.neighbors()",
    )
    .method(
        "fn index<T>(self: Grid<T>, cell: Cell) -> T",
        "The value at a cell; written `grid[cell]`.",
        "hit_prob[cell]",
    )
    .method(
        "fn cells<T>(self: Grid<T>) -> List<Cell>",
        "Every cell of the board, row by row.",
        "hit_prob.cells()",
    )
    .method(
        "fn max(self: Grid<Float>) -> Float",
        "The largest value of the grid.",
        "hit_prob.max()",
    )
    .method(
        "fn text(self: Question) -> String",
        "The question as the spotter reads it.",
        "q.text()",
    )
    .method(
        "fn Posterior.prior(particles: Int) -> Posterior",
        "The belief before any observation, with the given number of particles.",
        "Posterior.prior(500)",
    )
    .method(
        "fn hit_probabilities(self: Posterior) -> Grid<Float>",
        "For each cell, the probability that it holds a ship.",
        "posterior.hit_probabilities()",
    )
    .method(
        "fn p_yes(self: Posterior, q: Question) -> Float",
        "The probability that the spotter answers yes.",
        "posterior.p_yes(q)",
    )
    .method(
        "fn observe_shot(self: Posterior, cell: Cell, hit: Bool) -> Posterior",
        "The belief updated with a shot's outcome.",
        "posterior.observe_shot(cell, hit)",
    )
    .method(
        "fn observe_answer(self: Posterior, q: Question, yes: Bool) -> Posterior",
        "The belief updated with the spotter's answer.",
        "posterior.observe_answer(q, yes)",
    )
    .method(
        "fn best_after(self: Posterior, q: Question) -> Float",
        "The expected best hit probability after the question is answered.",
        "posterior.best_after(q)",
    )
    .method(
        "fn entropy(self: Posterior) -> Float",
        "The entropy of the belief, in bits.",
        "posterior.entropy()",
    );

    g.query(
        "shots_left: Int",
        "Shots remaining in the episode.",
        "game.shots_left > 0",
    )
    .query(
        "questions_left: Int",
        "Questions remaining in the episode.",
        "game.questions_left > 0",
    )
    .query(
        "hits: Int",
        "Shots so far that hit a ship.",
        "game.hits == 0",
    )
    .query("misses: Int", "Shots so far that missed.", "game.misses")
    .query("turn: Int", "The current turn, from 0.", "game.turn > 18")
    .query(
        "board_size: Int",
        "The number of rows (and columns) of the board.",
        "game.board_size",
    )
    .query(
        "fn unknown_cells() -> List<Cell>",
        "The cells not fired at yet.",
        "game.unknown_cells()",
    )
    .query(
        "fn is_unknown(cell: Cell) -> Bool",
        "True when the cell has not been fired at.",
        "game.is_unknown(cell)",
    )
    .query(
        "fn questions() -> List<Question>",
        "The questions the spotter can still be asked.",
        "game.questions()",
    )
    .query(
        "fn frontier() -> List<Cell>",
        "Unknown cells next to a hit that is not yet part of a sunk ship.",
        "game.frontier()",
    );

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
        "fn answer(q: Question, yes: Bool)",
        "The spotter's (possibly noisy) answer to a question.",
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
    #[test]
    fn every_binding_parses() {
        let game = super::game();
        assert!(game.problems.is_empty(), "{:?}", game.problems);
    }
}
