"""A chess player for ``gambit-client --bot``: not strong, but not random."""

from __future__ import annotations

import random

import chess

PIECE_VALUE = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9, chess.KING: 0}


def chooseBotMove(board: chess.Board, rng: random.Random) -> chess.Move:
    """A simple, not random player: mate if it can, win material, avoid hanging pieces."""
    best: list[chess.Move] = []
    bestScore = float("-inf")
    for move in board.legal_moves:
        score = 0.0
        mover = board.piece_type_at(move.from_square) or chess.PAWN
        captured = board.piece_type_at(move.to_square)
        if board.is_en_passant(move):
            captured = chess.PAWN
        if captured:
            score += PIECE_VALUE[captured]
        if move.promotion:
            score += PIECE_VALUE[move.promotion] - 1
        board.push(move)
        if board.is_checkmate():
            score += 1000
        elif board.is_stalemate() or board.is_insufficient_material():
            score -= 50
        else:
            if board.is_check():
                score += 0.3
            if board.is_attacked_by(board.turn, move.to_square):
                defended = board.is_attacked_by(not board.turn, move.to_square)
                score -= (
                    PIECE_VALUE[mover]
                    if not defended
                    else max(0, PIECE_VALUE[mover] - (PIECE_VALUE[captured] if captured else 0))
                )
            file, rank = chess.square_file(move.to_square), chess.square_rank(move.to_square)
            score += 0.05 * (3.5 - abs(3.5 - file)) + 0.05 * (3.5 - abs(3.5 - rank))
        board.pop()
        if score > bestScore + 1e-9:
            best, bestScore = [move], score
        elif abs(score - bestScore) <= 1e-9:
            best.append(move)
    return rng.choice(best)
