"""The Flex Template entry point (FLEX_TEMPLATE_PYTHON_PY_FILE in deploy/Dockerfile).

The launcher runs ``python /template/launch.py --runner=DataflowRunner --input=... [--param=value ...]``
with the template's parameters; the pipeline itself is the installed ``bunzai`` package, exactly
what the workers run from the same image.
"""

from jobs.normalize import main

if __name__ == "__main__":
    main()
