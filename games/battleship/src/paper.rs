//! The paper protocol: the anchor's board generator, the B01..B18 suite and the game seeds.

use std::fmt;

use crate::board::{Board, Color, NUM_SHIPS, Placement, Ship};
use crate::prng::Prng;

/// The paper fleet in placement order: (colour, length). 14 ship cells.
pub const PAPER_FLEET: [(Color, usize); NUM_SHIPS] = [
    (Color::Red, 5),
    (Color::Green, 4),
    (Color::Purple, 3),
    (Color::Orange, 2),
];

/// Board ids of the suite, B01..B18.
pub const PAPER_BOARD_IDS: [&str; 18] = [
    "B01", "B02", "B03", "B04", "B05", "B06", "B07", "B08", "B09", "B10", "B11", "B12", "B13",
    "B14", "B15", "B16", "B17", "B18",
];

/// Replicate games per board.
pub const SEEDS_PER_BOARD: usize = 3;

/// Attempts per ship before the generator gives up.
const MAX_ATTEMPTS: usize = 1000;

/// The generator found no free placement for a ship within 1000 attempts. The reference throws
/// here; it never happens for the seeds the protocol uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenerateError {
    /// The seed passed to the generator.
    pub seed: i64,
    /// The ship that could not be placed.
    pub color: Color,
}

impl fmt::Display for GenerateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "generateBoard({}) could not place the {} ship",
            self.seed, self.color
        )
    }
}

impl std::error::Error for GenerateError {}

/// The anchor's `generateBoard(seed)`, including its off-by-one: the start range is `8 - len`,
/// so no ship ever ends in column 8 (horizontal) or row H (vertical). For each ship: one draw for
/// the orientation (`< 0.5` is horizontal), then the row, then the column; reject on overlap.
pub fn generate_board(seed: i64) -> Result<Board, GenerateError> {
    let (masks, _) = generate_masks(seed)?;
    let ship = |i: usize| {
        let color = PAPER_FLEET[i].0;
        // Generated masks are straight lines, so this always succeeds.
        Placement::from_mask(masks[i])
            .map(|placement| Ship { color, placement })
            .ok_or(GenerateError { seed, color })
    };
    let ships = [ship(0)?, ship(1)?, ship(2)?, ship(3)?];
    // Generated ships never overlap, so this always succeeds.
    Board::new(ships).map_err(|_| GenerateError {
        seed,
        color: Color::Red,
    })
}

/// The generator's core, returning the four ship masks in fleet order and the union. It is the
/// allocation-free path the samplers use for rejection sampling.
pub(crate) fn generate_masks(seed: i64) -> Result<([u64; NUM_SHIPS], u64), GenerateError> {
    // With no shots to respect the generator is never abandoned, so `None` cannot occur.
    generate_consistent(seed, 0, 0).map(|board| board.unwrap_or_default())
}

/// `generateBoard(seed)` when its board covers every cell of `hits` and none of `misses`, else
/// `None` (also when the generator would have failed on a later ship).
///
/// The seed is abandoned as soon as its board cannot be consistent: a placed ship covers a miss,
/// or the ships still to place have fewer cells than the hits still uncovered. Every seed has
/// its own generator, so abandoning one skips only draws nobody else would see: the result is
/// the board `generate_masks` returns, filtered by consistency, draw for draw.
pub(crate) fn generate_consistent(
    seed: i64,
    hits: u64,
    misses: u64,
) -> Result<Option<([u64; NUM_SHIPS], u64)>, GenerateError> {
    let mut rng = Prng::new(seed);
    let mut masks = [0u64; NUM_SHIPS];
    let mut union = 0u64;
    // Ship cells still to place after the current ship.
    let mut remaining: u32 = PAPER_FLEET.iter().map(|&(_, len)| len as u32).sum();
    for (i, &(color, len)) in PAPER_FLEET.iter().enumerate() {
        remaining -= len as u32;
        let mut placed = false;
        for _ in 0..MAX_ATTEMPTS {
            let horizontal = rng.next_f64() < 0.5;
            let (row, col) = if horizontal {
                let row = rng.next_int(8);
                (row, rng.next_int(8 - len))
            } else {
                let row = rng.next_int(8 - len);
                (row, rng.next_int(8))
            };
            let mask = line(row, col, len, horizontal);
            if mask & union == 0 {
                masks[i] = mask;
                union |= mask;
                placed = true;
                break;
            }
        }
        if !placed {
            return Err(GenerateError { seed, color });
        }
        if union & misses != 0 || (hits & !union).count_ones() > remaining {
            return Ok(None);
        }
    }
    Ok(Some((masks, union)))
}

fn line(row: usize, col: usize, len: usize, horizontal: bool) -> u64 {
    (0..len).fold(0u64, |m, k| {
        let idx = if horizontal {
            row * 8 + col + k
        } else {
            (row + k) * 8 + col
        };
        m | 1u64 << idx
    })
}

/// Index of a paper board id (`B01` → 0), if it is one of the 18.
pub fn paper_board_index(id: &str) -> Option<usize> {
    PAPER_BOARD_IDS.iter().position(|&b| b == id)
}

/// The suite board with index 0..18 (`B01` = `generateBoard(1001)`), or `None` out of range.
pub fn paper_board(index: usize) -> Option<Board> {
    if index < PAPER_BOARD_IDS.len() {
        generate_board(1001 + index as i64).ok()
    } else {
        None
    }
}

/// The anchor's `hashSeed(boardId, seedIndex)`: h = seedIndex·31, then h = int32(h·31 + c) per
/// character code, and the game seed is |h| + 1.
pub fn game_seed(board_id: &str, seed_index: usize) -> i64 {
    let mut h = (seed_index as i32).wrapping_mul(31);
    for c in board_id.encode_utf16() {
        h = h.wrapping_mul(31).wrapping_add(i32::from(c));
    }
    i64::from(h).abs() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// §1.4 of the anchor spec: placements and game seeds of the suite.
    const TABLE: [(&str, [&str; 4], [i64; 3]); 18] = [
        (
            "B01",
            ["F2-F6 H", "A2-D2 V", "H2-H4 H", "D6-E6 V"],
            [64964, 988485, 1912006],
        ),
        (
            "B02",
            ["F3-F7 H", "C2-C5 H", "E1-G1 V", "E4-E5 H"],
            [64965, 988486, 1912007],
        ),
        (
            "B03",
            ["F2-F6 H", "D1-G1 V", "B5-D5 V", "D2-D3 H"],
            [64966, 988487, 1912008],
        ),
        (
            "B04",
            ["F3-F7 H", "B7-E7 V", "C1-C3 H", "D1-D2 H"],
            [64967, 988488, 1912009],
        ),
        (
            "B05",
            ["F3-F7 H", "G3-G6 H", "C3-E3 V", "B1-B2 H"],
            [64968, 988489, 1912010],
        ),
        (
            "B06",
            ["F2-F6 H", "C8-F8 V", "B5-B7 H", "H2-H3 H"],
            [64969, 988490, 1912011],
        ),
        (
            "B07",
            ["F3-F7 H", "B3-B6 H", "E2-G2 V", "B2-C2 V"],
            [64970, 988491, 1912012],
        ),
        (
            "B08",
            ["G2-G6 H", "B3-B6 H", "F3-F5 H", "H4-H5 H"],
            [64971, 988492, 1912013],
        ),
        (
            "B09",
            ["G3-G7 H", "C8-F8 V", "C4-E4 V", "A1-A2 H"],
            [64972, 988493, 1912014],
        ),
        (
            "B10",
            ["G2-G6 H", "B4-B7 H", "C4-C6 H", "H1-H2 H"],
            [64994, 988515, 1912036],
        ),
        (
            "B11",
            ["G3-G7 H", "B7-E7 V", "E1-G1 V", "B4-B5 H"],
            [64995, 988516, 1912037],
        ),
        (
            "B12",
            ["G3-G7 H", "D1-G1 V", "A5-C5 V", "E5-F5 V"],
            [64996, 988517, 1912038],
        ),
        (
            "B13",
            ["G3-G7 H", "C2-C5 H", "H3-H5 H", "E6-F6 V"],
            [64997, 988518, 1912039],
        ),
        (
            "B14",
            ["G3-G7 H", "A2-D2 V", "D8-F8 V", "C5-D5 V"],
            [64998, 988519, 1912040],
        ),
        (
            "B15",
            ["G2-G6 H", "F2-F5 H", "D1-D3 H", "A5-B5 V"],
            [64999, 988520, 1912041],
        ),
        (
            "B16",
            ["H1-H5 H", "D8-G8 V", "E5-E7 H", "A8-B8 V"],
            [65000, 988521, 1912042],
        ),
        (
            "B17",
            ["H1-H5 H", "D3-D6 H", "A2-C2 V", "E1-E2 H"],
            [65001, 988522, 1912043],
        ),
        (
            "B18",
            ["H1-H5 H", "A7-D7 V", "D4-D6 H", "C1-C2 H"],
            [65002, 988523, 1912044],
        ),
    ];

    #[test]
    fn suite_placements_match_the_table() {
        for (i, (id, placements, _)) in TABLE.iter().enumerate() {
            assert_eq!(PAPER_BOARD_IDS[i], *id);
            let board = paper_board(i).expect("suite board");
            let got: Vec<String> = board
                .ships()
                .iter()
                .map(|s| s.placement.to_string())
                .collect();
            assert_eq!(got, placements.to_vec(), "{id}");
            assert_eq!(board.ship_cells(), 14);
        }
        assert_eq!(paper_board(18), None);
    }

    #[test]
    fn all_54_game_seeds_match_the_table() {
        for (id, _, seeds) in TABLE {
            for (k, &s) in seeds.iter().enumerate() {
                assert_eq!(game_seed(id, k), s, "{id} seed {k}");
            }
        }
    }

    #[test]
    fn generator_never_uses_h8_or_ends_on_the_far_edges() {
        for seed in 0..300 {
            let b = generate_board(seed * 7919 + 13).expect("board");
            assert_eq!(b.union() & (1 << 63), 0);
            for s in b.ships() {
                let end = s.placement.end();
                if s.placement.horizontal {
                    assert!(end.col() < 7);
                } else {
                    assert!(end.row() < 7);
                }
            }
        }
    }
}
