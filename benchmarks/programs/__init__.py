"""Small, complete training programs written the way people write PyTorch, each runnable under
ember or torch by one switch (``--lib ember|torch``): ``python -m benchmarks.programs`` times
them whole, each library in its own processes. Each program is a script, not a module to import:
importing one would train it."""

PROGRAMS = ("gpt_char", "names_mlp", "tagger_loop", "scalar_params", "cnn_small")
