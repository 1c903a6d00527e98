# botapi.py, html.py and spec.py here are aliases of playground.emulator's modules, whose doctests
# are collected there
collect_ignore = ["botapi.py", "html.py", "spec.py"]
