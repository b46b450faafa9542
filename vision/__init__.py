"""Table-camera vision: turn a frame into the cards on the layout.

The boundary with the rest of monster-match is the card code (rank ``A23456789TJQK`` then suit
``SHDC``); nothing here imports game logic. Entry points:

* :func:`vision.recognize.recognize_image` / :class:`vision.recognize.Recognizer` - read a frame.
* :func:`vision.synth.render_table` - draw a synthetic table scene with known labels.
* :func:`vision.evaluate.evaluate_dir` - score a labelled directory.
"""
