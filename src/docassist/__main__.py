"""`python -m docassist`: the `docassist` command."""

from docassist.cli import main

main()
