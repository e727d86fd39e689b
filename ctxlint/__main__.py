from ctxlint.cli import main

main()
