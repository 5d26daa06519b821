//! Text rendering of a board: the placements list and an 8×8 grid picture.

use std::fmt::Write;

use crate::board::Board;
use crate::game::Protocol;
use crate::grand::{GRAND_BOARD_IDS, ParseBoardError, grand_board};
use crate::paper::{PAPER_BOARD_IDS, SEEDS_PER_BOARD, game_seed, paper_board};

/// Renders `board` under a title: one line per ship (colour, length, first–last cell,
/// orientation), then the grid with column numbers, row letters, `.` for water and the ship's
/// colour letter on ship cells.
pub fn render_board(title: &str, board: &Board) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{title} ({} ship cells)", board.ship_cells());
    for ship in board.ships() {
        let _ = writeln!(
            out,
            "  {:<6} {}  {}",
            ship.color.name(),
            ship.len(),
            ship.placement
        );
    }
    out.push_str("    1 2 3 4 5 6 7 8\n");
    for r in 0..8 {
        let _ = write!(out, "  {}", (b'A' + r as u8) as char);
        for c in 0..8 {
            let bit = 1u64 << (r * 8 + c);
            let sym = board
                .ships()
                .iter()
                .find(|s| s.mask() & bit != 0)
                .map_or('.', |s| s.color.letter());
            let _ = write!(out, " {sym}");
        }
        out.push('\n');
    }
    out
}

/// Renders all 18 boards of a protocol, separated by blank lines (the body of
/// `harness battleship boards --protocol paper|grand`). Paper titles list the three game seeds;
/// grand titles the shared seeds 42, 111, 1337.
pub fn render_suite(protocol: Protocol) -> Result<String, ParseBoardError> {
    let mut parts = Vec::with_capacity(18);
    match protocol {
        Protocol::Paper => {
            for (i, id) in PAPER_BOARD_IDS.iter().enumerate() {
                let seeds: Vec<String> = (0..SEEDS_PER_BOARD)
                    .map(|k| game_seed(id, k).to_string())
                    .collect();
                let title = format!(
                    "{id} paper, generateBoard({}), seeds {}",
                    1001 + i,
                    seeds.join(", ")
                );
                // The suite boards always generate; a failure would be a generator bug.
                if let Some(board) = paper_board(i) {
                    parts.push(render_board(&title, &board));
                }
            }
        }
        Protocol::Grand => {
            for (i, id) in GRAND_BOARD_IDS.iter().enumerate() {
                if let Some(board) = grand_board(i) {
                    parts.push(render_board(
                        &format!("{id} grand, seeds 42, 111, 1337"),
                        &board?,
                    ));
                }
            }
        }
    }
    Ok(parts.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_b01() {
        let board = crate::paper::paper_board(0).unwrap();
        let text = render_board("B01", &board);
        let expected = "\
B01 (14 ship cells)
  red    5  F2-F6 H
  green  4  A2-D2 V
  purple 3  H2-H4 H
  orange 2  D6-E6 V
    1 2 3 4 5 6 7 8
  A . G . . . . . .
  B . G . . . . . .
  C . G . . . . . .
  D . G . . . O . .
  E . . . . . O . .
  F . R R R R R . .
  G . . . . . . . .
  H . P P P . . . .
";
        assert_eq!(text, expected);
    }

    #[test]
    fn renders_both_suites() {
        let paper = render_suite(Protocol::Paper).unwrap();
        assert_eq!(paper.matches("ship cells").count(), 18);
        assert!(paper.starts_with("B01 paper, generateBoard(1001), seeds 64964, 988485, 1912006"));
        let grand = render_suite(Protocol::Grand).unwrap();
        assert_eq!(grand.matches("ship cells").count(), 18);
        assert!(grand.contains("B16 grand, seeds 42, 111, 1337 (18 ship cells)"));
    }
}
