"""Serial devices at the table: the card-reading shoe and the table I/O board.

Modules: :mod:`.frames` (CRC, encoding, parser), :mod:`.ports` (pyserial, pty and TCP byte
streams), :mod:`.link` (the shared link layer), :mod:`.shoe`, :mod:`.board` (device clients),
:mod:`.dealing` (card-to-seat assignment), :mod:`.wagering` (§ 635b.3(c)(d) wager recognition)
and :mod:`.sim` (device simulators with fault injection).
"""
