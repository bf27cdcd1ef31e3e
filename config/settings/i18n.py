"""Languages and time.

English and Simplified Chinese. The language follows the user's preference, else the
switcher's cookie, else the browser's Accept-Language (console/viewer.py); URLs stay the
same. The catalogue is locale/zh_Hans/LC_MESSAGES/django.po (glossary: docs/glossary.md).
"""

from config.settings.env import BASE_DIR, env
from config.settings.security import SESSION_COOKIE_SECURE

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
LANGUAGE_COOKIE_NAME = "console_language"
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
LANGUAGE_COOKIE_SAMESITE = "Lax"
LANGUAGE_COOKIE_SECURE = SESSION_COOKIE_SECURE
LANGUAGE_COOKIE_HTTPONLY = True
# Named date formats per language (STAMP_FORMAT ...) in console/formats/<locale>/.
FORMAT_MODULE_PATH = ["console.formats"]
# The server's zone; each viewer sees their browser's zone, or UTC when they toggle it.
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True
