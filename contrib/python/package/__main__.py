"""``python3 -m sbx_sandbox -c CODE ...``: the command line of the installed package.

The same as running sbx_sandbox.py itself (see sbx_sandbox.main).
"""

import sys

from sbx_sandbox import main

sys.exit(main())
