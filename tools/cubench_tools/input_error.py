"""The one error a tool refuses its input with: a bad flag, file or output path, its message the
whole story (one line on stderr, exit status 2: cli.run)."""



class InputError(Exception):
    """Malformed or mismatched input: the message is the whole story."""
