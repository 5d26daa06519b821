//! Text rendering of a board: the placements list and an 8×8 grid picture.

use std::fmt::Write;

use crate::board::Board;

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
}
