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

/// Renders one board of a protocol's suite under a title that names the suite and its game
/// seeds: the paper's three replicate seeds of that board, or Grand et al.'s shared seeds.
pub fn render_instance(protocol: Protocol, id: &str) -> Result<String, String> {
    let index = crate::paper::paper_board_index(id)
        .ok_or_else(|| format!("unknown board `{id}`: the boards are B01 to B18"))?;
    match protocol {
        Protocol::Paper => {
            let seeds: Vec<String> = (0..SEEDS_PER_BOARD)
                .map(|k| game_seed(id, k).to_string())
                .collect();
            let title = format!(
                "{id} paper, generateBoard({}), seeds {}",
                1001 + index,
                seeds.join(", ")
            );
            let board = paper_board(index)
                .ok_or_else(|| format!("board `{id}` does not generate (a generator bug)"))?;
            Ok(render_board(&title, &board))
        }
        Protocol::Grand => {
            let board = grand_board(index)
                .ok_or_else(|| format!("unknown board `{id}`"))?
                .map_err(|error: ParseBoardError| {
                    format!("board `{id}` does not parse: {error}")
                })?;
            Ok(render_board(
                &format!("{} grand, seeds 42, 111, 1337", GRAND_BOARD_IDS[index]),
                &board,
            ))
        }
    }
}

/// Renders all 18 boards of a protocol, separated by blank lines.
pub fn render_suite(protocol: Protocol) -> Result<String, String> {
    let parts: Result<Vec<String>, String> = PAPER_BOARD_IDS
        .iter()
        .map(|id| render_instance(protocol, id))
        .collect();
    Ok(parts?.join("\n"))
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
