from rdmatool.cli import main

main()
