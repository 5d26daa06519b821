//! Noisy Collaborative Battleship: rules, boards, questions, belief backends and kernels.
