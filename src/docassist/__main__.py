from docassist.cli import main

main()
