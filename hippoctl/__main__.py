"""python -m hippoctl"""

import sys

from hippoctl.cli import main

sys.exit(main())
