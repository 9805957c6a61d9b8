"""python -m hippod run"""

import sys

from hippod.main import main

sys.exit(main())
