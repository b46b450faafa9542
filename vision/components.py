"""Connected components of a few items joined in pairs (union-find with path halving).

    >>> component_labels(5, [(0, 1), (3, 4), (1, 0)])
    [1, 1, 2, 4, 4]
"""

from __future__ import annotations

from collections.abc import Iterable


def component_labels(n: int, pairs: Iterable[tuple[int, int]]) -> list[int]:
    """For each of ``n`` items, a representative item of its component, the items joined by
    ``pairs``: two items share a label exactly when a chain of pairs joins them."""
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in pairs:
        parent[root(int(i))] = root(int(j))
    return [root(i) for i in range(n)]
