## Zocrates-Einstellungen (Zotero > Einstellungen > Zocrates). Die Gruppen unter der Einleitung
## erzeugt src/ui/prefs-view.js.

zocrates-pref-title = Zocrates
zocrates-pref-intro = Zocrates beantwortet Fragen zu Ihrer Bibliothek über einen lokalen Dienst, der mit `make run` gestartet wird. Diese Einstellungen speichert dieser Dienst (zocrates_config.json in Ihrem Zotero-Datenverzeichnis), mit Ausnahme der Gateway-Adresse, die Zotero speichert.
zocrates-pref-loading = Zocrates-Einstellungen werden geladen…

## Verbindung. Text in `Backticks` wird als Code angezeigt.

zocrates-pref-connection = Verbindung
zocrates-pref-gateway-url = Gateway-Adresse
zocrates-pref-gateway-help = Wo `make run` Zocrates bereitstellt (standardmäßig http://127.0.0.1:8765). Das Token wird aus `{ $path }` gelesen.
zocrates-pref-test-connection = Verbindung testen
zocrates-pref-testing = Verbindung wird getestet…
zocrates-pref-connected =
    { $count ->
        [one] Verbunden: Zocrates antwortet unter { $url } und akzeptiert das Token ({ $count } Chat).
       *[other] Verbunden: Zocrates antwortet unter { $url } und akzeptiert das Token ({ $count } Chats).
    }
zocrates-pref-url-invalid = Geben Sie eine URL wie http://127.0.0.1:8765 ein.
zocrates-pref-url-scheme = Die URL muss mit http:// oder https:// beginnen.
zocrates-pref-url-not-local = Zocrates antwortet nur auf diesem Computer: Verwenden Sie 127.0.0.1 oder localhost mit seinem Port.

## Bibliotheksindex: die Schaltflächen, die beiden Fortschrittsbalken (Stichwortindex, dann
## Embeddings) und die Statuszeile.

zocrates-pref-library = Bibliotheksindex
zocrates-pref-library-intro = Zocrates liest die PDFs Ihrer Zotero-Bibliothek in einen lokalen Suchindex ein. Erneutes Indexieren liest nur, was sich geändert hat.
zocrates-pref-sync = Neue und geänderte Artikel indexieren
zocrates-pref-sync-full = Alles neu indexieren
    .title = Jedes PDF neu lesen (dauert bei einer großen Bibliothek einige Minuten)
zocrates-pref-sync-stop = Stopp
zocrates-pref-progress-keyword =
    .aria-label = Bibliothek wird indexiert
zocrates-pref-progress-embedding =
    .aria-label = Embeddings der Textstellen
zocrates-pref-sync-searchable-status = Jeder Artikel ist per Stichwort durchsuchbar; die Embeddings folgen im Hintergrund.
zocrates-pref-sync-stopped-watching = Beobachtung beendet; die Embeddings laufen im Hintergrund weiter.
zocrates-pref-sync-stopped = Indexierung gestoppt; was bereits indexiert wurde, bleibt erhalten.
zocrates-pref-sync-scanning = Ihre Zotero-Bibliothek wird gelesen…
zocrates-pref-sync-working = Wird indexiert…
zocrates-pref-sync-indexing =
    { $total ->
        [one] Indexierung: { $done } von { $total } Seite ({ $percent } %)
       *[other] Indexierung: { $done } von { $total } Seiten ({ $percent } %)
    }
zocrates-pref-sync-searchable =
    { $pages ->
        [0] Durchsuchbar: nichts Neues zu indexieren
        [one] Durchsuchbar: { $pages } Seite per Stichwort indexiert
       *[other] Durchsuchbar: { $pages } Seiten per Stichwort indexiert
    }
zocrates-pref-sync-done =
    { $pages ->
        [0] Fertig: nichts Neues zu indexieren
        [one] Fertig: { $pages } Seite indexiert
       *[other] Fertig: { $pages } Seiten indexiert
    }
# Die Angaben unter dem Balken, verbunden mit " · ".
zocrates-pref-sync-papers =
    { $total ->
        [one] { $done } von { $total } Artikel
       *[other] { $done } von { $total } Artikeln
    }
zocrates-pref-sync-rate = { NUMBER($rate, minimumFractionDigits: 1, maximumFractionDigits: 1) } Seiten/s
zocrates-pref-time-left = noch etwa { $duration }
zocrates-pref-duration-seconds = { $s } s
zocrates-pref-duration-minutes = { $m } Min.
zocrates-pref-duration-hours = { $h } Std. { $m } Min.
zocrates-pref-embedding-progress =
    { $total ->
        [one] Embeddings für die Bedeutungssuche: { $done } von { $total } Textstelle ({ $percent } %)
       *[other] Embeddings für die Bedeutungssuche: { $done } von { $total } Textstellen ({ $percent } %)
    }
zocrates-pref-embedding-ready =
    { $total ->
        [one] Bedeutungssuche bereit: { $total } Textstelle eingebettet
       *[other] Bedeutungssuche bereit: { $total } Textstellen eingebettet
    }
zocrates-pref-embedding-pending = { $count } ausstehend
zocrates-pref-embedding-rate = { NUMBER($rate, minimumFractionDigits: 1, maximumFractionDigits: 1) } Textstellen/s
zocrates-pref-embedding-stalled = ins Stocken geraten: { $error }
zocrates-pref-embedding-meanwhile = die Stichwortsuche deckt den Rest so lange ab
# Die Statuszeile, ihre Teile verbunden mit " · ": „37 Artikel · 1.015 Seiten · 1.885 Textstellen indexiert“.
zocrates-pref-library-papers = { $count } Artikel
zocrates-pref-library-pages =
    { $count ->
        [one] { $count } Seite
       *[other] { $count } Seiten
    }
zocrates-pref-library-passages =
    { $count ->
        [one] { $count } Textstelle indexiert
       *[other] { $count } Textstellen indexiert
    }
# $when ist eine zocrates-time-*-Nachricht („vor 5 Min.“) oder ein Datum.
zocrates-pref-library-last-sync = zuletzt indexiert { $when }
zocrates-pref-library-own = { $count } Ihrer Hervorhebungen, Kommentare und Notizen
zocrates-pref-library-syncing = wird gerade indexiert
zocrates-pref-library-waiting =
    { $count ->
        [one] { $count } Textstelle wartet auf Embeddings
       *[other] { $count } Textstellen warten auf Embeddings
    }
# Die PDFs, die nicht (vollständig) durchsuchbar sind; $what ist die Begründung des Gateways
# oder zocrates-pref-pages-without-text.
zocrates-pref-pdfs-no-text =
    { $count ->
        [one] { $count } PDF ohne Textebene (gescannt)
       *[other] { $count } PDFs ohne Textebene (gescannt)
    }
zocrates-pref-pdfs-failed =
    { $count ->
        [one] { $count } PDF nicht lesbar
       *[other] { $count } PDFs nicht lesbar
    }
zocrates-pref-pdfs-missing =
    { $count ->
        [one] { $count } PDF fehlt
       *[other] { $count } PDFs fehlen
    }
# Seiten gescannter PDFs: werden gerade per OCR gelesen ($rate Seiten/s) oder warten auf
# Tesseract ($error sagt, wie man es installiert).
zocrates-pref-ocr-reading =
    { $count ->
        [one] OCR liest { $count } Seite gescannter PDFs ({ NUMBER($rate, maximumFractionDigits: 2) } Seiten/s)
       *[other] OCR liest { $count } Seiten gescannter PDFs ({ NUMBER($rate, maximumFractionDigits: 2) } Seiten/s)
    }
zocrates-pref-ocr-unavailable =
    { $count ->
        [one] { $count } Seite gescannter PDFs wartet auf OCR: { $error }
       *[other] { $count } Seiten gescannter PDFs warten auf OCR: { $error }
    }
zocrates-pref-problem = { $name }: { $what }
zocrates-pref-pages-without-text =
    { $count ->
        [one] { $count } Seite ohne Text
       *[other] { $count } Seiten ohne Text
    }

## Die Einstellungen aus zocrates_config.json, Feld für Feld gespeichert. Der Hilfetext zur
## Beschriftung eines Feldes steht in der Nachricht mit derselben ID und „-help“.

zocrates-pref-saving = Wird gespeichert…
zocrates-pref-saved = Gespeichert
zocrates-pref-saved-in = Gespeichert in `{ $path }`
zocrates-pref-default = Standard: { $value }
zocrates-pref-invalid-whole-number = Geben Sie eine ganze Zahl ein.
zocrates-pref-invalid-negative = Geben Sie 0 oder mehr ein.
zocrates-pref-invalid-number = Geben Sie eine Zahl ein.
zocrates-pref-other = Weitere Einstellungen

zocrates-pref-models = Modelle
zocrates-pref-models-intro = Jede Rolle verwendet das eingebaute Offline-Modell (kein Schlüssel, kein Netzwerk: Es zitiert Ihre Artikel), ein Gemini-Modell (benötigt GOOGLE_API_KEY) oder jedes Modell, das LiteLLM erreicht (openrouter/…, ollama_chat/…, openai/… mit einer Basis-URL). API-Schlüssel werden aus der Umgebung von Zocrates gelesen und nie hier gespeichert.
zocrates-pref-coordinator-model = Koordinationsmodell
zocrates-pref-coordinator-model-help = Führt den Chat selbst: liest Ihre Frage und plant die Suche.
zocrates-pref-subagent-model = Suchmodell
zocrates-pref-subagent-model-help = Führt die Suchdurchgänge in Ihrer Bibliothek aus.
zocrates-pref-synthesizer-model = Antwortmodell
zocrates-pref-synthesizer-model-help = Schreibt die Antwort mit ihren Belegen.
zocrates-pref-synthesizer-thinking = Nachdenken des Antwortmodells
zocrates-pref-synthesizer-thinking-help = Wie lange das Antwortmodell nachdenkt, bevor es schreibt (Gemini 2.5 und neuer, Reasoning-Modelle über LiteLLM; andere ignorieren es). Mehr Nachdenken: bessere Antworten auf schwierige Fragen, langsamer und teurer. Seine Gedanken erscheinen als Schritte, nie in der Antwort.
zocrates-pref-thinking-off = Aus (Voreinstellung des Modells)
zocrates-pref-thinking-low = Wenig
zocrates-pref-thinking-medium = Mittel
zocrates-pref-thinking-high = Viel
zocrates-pref-model-api-base = URL des Modellservers
zocrates-pref-model-api-base-help = Basis-URL eines OpenAI-kompatiblen oder Ollama-Servers für LiteLLM-Modelle. API-Schlüssel kommen aus der Umgebung von Zocrates (GOOGLE_API_KEY, OPENROUTER_API_KEY, ZOCRATES_MODEL_API_KEY), nie aus dieser Datei.
zocrates-pref-model-tool-calling = Werkzeugaufrufe
zocrates-pref-model-tool-calling-help = Ob die Modelle die Suchwerkzeuge von Zocrates selbst aufrufen. auto: das Modell einmal prüfen; on: immer; off: das Modell schreibt nur die Antwort, und Zocrates sucht nach seinem festen Ablauf (für kleine lokale Modelle).
zocrates-pref-tool-calling-auto = Automatisch (das Modell einmal prüfen)
zocrates-pref-tool-calling-on = An
zocrates-pref-tool-calling-off = Aus (Zocrates sucht, das Modell schreibt)
zocrates-pref-model-context-window = Kontextfenster (Tokens)
zocrates-pref-model-context-window-help = Tokens, die der Server des Modells fasst; 0 liest den Wert vom Server.

## The model server's models (GET /models/local), offered in the model fields' lists, and
## Test model (POST /models/test) next to each role's model field.

zocrates-pref-local-models-loading = Der Modellserver wird gefragt, welche Modelle er anbietet…
# $server is zocrates-pref-local-server-openai or zocrates-pref-local-server-ollama.
zocrates-pref-local-models-found =
    { $count ->
        [0] Der Modellserver ({ $server }) nennt keine Modelle: Laden Sie dort eines und verlassen Sie dann dieses Feld, um erneut nachzusehen.
        [one] Der Modellserver ({ $server }) bietet { $count } Modell an: Wählen Sie es aus der Liste eines Modellfelds.
       *[other] Der Modellserver ({ $server }) bietet { $count } Modelle an: Wählen Sie eines aus der Liste eines Modellfelds.
    }
zocrates-pref-local-server-openai = OpenAI-kompatibel
zocrates-pref-local-server-ollama = Ollama
# A model the server lists, in a model field's list: the server's name for it, its context size.
zocrates-pref-local-model = { $id } (Modellserver)
zocrates-pref-local-model-context = { $id } (Modellserver, { NUMBER($tokens) } Tokens Kontext)
zocrates-pref-models-unsupported = Diese Version von Zocrates kann keine Modelle auflisten oder testen: Aktualisieren Sie Zocrates und starten Sie es dann neu (`make run`).
zocrates-pref-model-test = Modell testen
    .title = Dieses Modell über die URL des Modellservers (Gruppe Modelle) um eine kurze Antwort bitten
zocrates-pref-model-testing = { $model } wird getestet…
# The test's one line, its parts joined by " · ":
# "Replied “Hello!” · 1.2 s · 41.2 tokens/s · context 4,096 tokens · can call tools".
zocrates-pref-model-test-reply = Antwortete „{ $reply }“
zocrates-pref-model-test-no-reply = Antwortete ohne Text
zocrates-pref-model-test-seconds = { NUMBER($seconds, maximumFractionDigits: 1) } s
zocrates-pref-model-test-rate = { NUMBER($rate, maximumFractionDigits: 1) } Tokens/s
zocrates-pref-model-test-context = Kontext { NUMBER($tokens) } Tokens
zocrates-pref-model-test-context-unknown = Kontextgröße unbekannt (Kontextfenster einstellen)
zocrates-pref-model-test-tools-yes = kann Werkzeuge aufrufen
zocrates-pref-model-test-tools-no = kann keine Werkzeuge aufrufen: Werkzeugaufrufe auf Aus stellen
zocrates-pref-model-test-tools-unknown = Werkzeugaufrufe nicht geprüft

zocrates-pref-research = Deep Research
zocrates-pref-research-intro = Der erste Suchdurchgang einer Frage arbeitet innerhalb dieser Grenzen. Lässt er Lücken, hält der Chat an einem Kontrollpunkt an, an dem Sie eine Erweiterung gewähren oder mit dem Gefundenen antworten lassen.
zocrates-pref-hitl-enabled = An einem Kontrollpunkt anhalten, wenn die Suche Lücken lässt
zocrates-pref-hitl-enabled-help = Findet die Suche Lücken oder ist ihr Budget aufgebraucht, wartet die Antwort, bis Sie eine Erweiterung gewähren oder sie sofort schreiben lassen. Aus: Die Antwort wird aus dem geschrieben, was der erste Durchgang gefunden hat.
zocrates-pref-max-retrieval-tools = Suchen im ersten Durchgang
zocrates-pref-max-retrieval-tools-help = Erlaubte Suchen in der Bibliothek vor dem ersten Kontrollpunkt.
zocrates-pref-hard-word-ceiling = Gelesene Wörter im ersten Durchgang
zocrates-pref-hard-word-ceiling-help = Wörter gefundenen Textes, die der erste Durchgang lesen darf (7.500 Wörter sind etwa 10.000 Tokens).
zocrates-pref-max-rerank-chunks = Textstellen für die Antwort
zocrates-pref-max-rerank-chunks-help = Textstellen als Belege, die das Antwortmodell erhält.
zocrates-pref-extension-call-increment = Zusätzliche Suchen je Erweiterung
zocrates-pref-extension-call-increment-help = Suchen, die jede gewährte Erweiterung hinzufügt.
zocrates-pref-extension-word-increment = Zusätzliche Wörter je Erweiterung
zocrates-pref-extension-word-increment-help = Wörter gefundenen Textes, die jede gewährte Erweiterung hinzufügt.
zocrates-pref-extension-chunk-increment = Zusätzliche Textstellen je Erweiterung
zocrates-pref-extension-chunk-increment-help = Textstellen, die jede gewährte Erweiterung zu dem hinzufügt, was die Antwort erhält.
zocrates-pref-max-extensions = Erweiterungen je Frage
zocrates-pref-max-extensions-help = Wie viele Erweiterungen einer einzelnen Frage gewährt werden können.
zocrates-pref-online-search-enabled = Auch in OpenAlex nach Literatur außerhalb Ihrer Bibliothek suchen
zocrates-pref-online-search-enabled-help = Der Chat darf in OpenAlex nach Artikeln außerhalb Ihrer Bibliothek suchen (benötigt eine Netzwerkverbindung; ohne Verbindung arbeitet der Chat ohne diese Suche weiter).

zocrates-pref-compaction = Lange Unterhaltungen
zocrates-pref-compaction-intro = Nach einer Runde können lange Chats verdichtet werden: Ältere Runden werden zusammengefasst, die neuesten wörtlich behalten, sodass das Modell den Faden behält, ohne alles neu zu lesen.
zocrates-pref-enable-adaptive-compaction = Lange Unterhaltungen verdichten
zocrates-pref-enable-adaptive-compaction-help = Nach einer Runde wird eine lange Unterhaltung verdichtet, wenn es sich lohnt.
zocrates-pref-compaction-summarizer-model = Zusammenfassungsmodell
zocrates-pref-compaction-summarizer-model-help = Schreibt die Zusammenfassung der älteren Runden: offline (eingebaut, zitiert sie), ein Gemini-Name oder ein LiteLLM-Name.
zocrates-pref-compaction-retention-turns = Neueste Runden, die wörtlich bleiben
zocrates-pref-compaction-retention-turns-help = Abgeschlossene Runden, die die Verdichtung unverändert behält.
zocrates-pref-compaction-min-turns = Runden, bevor verdichtet werden kann
zocrates-pref-compaction-min-turns-help = Abgeschlossene Runden, die ein Chat braucht, bevor eine Verdichtung in Frage kommt (mindestens eine mehr als die behaltenen Runden).
zocrates-pref-compaction-token-floor = Nie verdichten unter (Tokens)
zocrates-pref-compaction-token-floor-help = Unter so vielen Tokens Unterhaltung kommt keine Verdichtung in Frage.
zocrates-pref-compaction-token-ceiling = Immer verdichten über (Tokens)
zocrates-pref-compaction-token-ceiling-help = Ab so vielen Tokens Unterhaltung wird der Chat verdichtet, ohne das Entscheidungsmodell zu fragen.
zocrates-pref-compaction-threshold = Entscheidungsschwelle (0–1)
zocrates-pref-compaction-threshold-help = Wie wahrscheinlich das Entscheidungsmodell eine Verdichtung für sinnvoll halten muss (0 bis 1), bevor die Unterhaltung verdichtet wird.
zocrates-pref-compaction-decision-model = Entscheidungsmodell
zocrates-pref-compaction-decision-model-help = Entscheidet, ob verdichtet wird: local (eingebaut, kein Netzwerk) oder ein Modell der Decisions API wie inception/mercury-decide (benötigt OPENROUTER_API_KEY).

## Chats & Speicher: Aufbewahrung, Größe der Datenbank und „Jetzt aufräumen“.

zocrates-pref-sessions = Chats & Speicher
zocrates-pref-sessions-intro = Chats werden in sessions.db in Ihrem Zotero-Datenverzeichnis gespeichert. Alte Chats werden nach diesen Regeln beim Start von Zotero entfernt oder sofort mit „Jetzt aufräumen“; Chats, die gerade antworten, bleiben unberührt.
zocrates-pref-retention-days = Chats löschen, die so lange nicht verwendet wurden (Tage)
zocrates-pref-retention-days-help = Chats, die so viele Tage nicht aktualisiert wurden, werden gelöscht. Leer oder 0 behält sie, egal wie alt sie sind.
zocrates-pref-max-sessions = Höchstens so viele Chats behalten
zocrates-pref-max-sessions-help = Über diese Anzahl hinaus werden die am längsten nicht aktualisierten Chats gelöscht. Leer oder 0: keine Begrenzung.
zocrates-pref-clean-up = Jetzt aufräumen
zocrates-pref-cleaning = Wird aufgeräumt: Die Aufbewahrungsregeln werden angewendet, dann wird die Datenbank verdichtet, wenn es sich lohnt…
# Die Speicherzeile, ihre Teile verbunden mit " · ": „Datenbank 2,5 MB · 7 Chats · 448 Ereignisse · 2 % frei“.
zocrates-pref-storage-database = Datenbank { $size }
zocrates-pref-storage-chats =
    { $count ->
        [one] { $count } Chat
       *[other] { $count } Chats
    }
zocrates-pref-storage-events =
    { $count ->
        [one] { $count } Ereignis
       *[other] { $count } Ereignisse
    }
zocrates-pref-storage-free = { $percent } % freier Platz
# Der Bericht des Aufräumens, seine Sätze durch Leerzeichen verbunden; $why verbindet die
# Nachrichten clean-empty, clean-expired und clean-over-cap mit Kommas.
zocrates-pref-clean-deleted =
    { $count ->
        [one] { $count } Chat gelöscht ({ $why }).
       *[other] { $count } Chats gelöscht ({ $why }).
    }
zocrates-pref-clean-empty = { $count } leer
zocrates-pref-clean-expired = { $count } abgelaufen
zocrates-pref-clean-over-cap = { $count } über der Höchstzahl
zocrates-pref-clean-none = Kein Chat musste gelöscht werden.
zocrates-pref-clean-kept-running =
    { $count ->
        [one] { $count } laufender Chat behalten.
       *[other] { $count } laufende Chats behalten.
    }
zocrates-pref-clean-compacted = Datenbank verdichtet: { $before } → { $after } ({ $saved } freigegeben).
zocrates-pref-clean-not-compacted = Nicht verdichtet.
# $reason ist eine der Nachrichten zocrates-pref-vacuum-*.
zocrates-pref-clean-not-compacted-because = Nicht verdichtet: { $reason }.
zocrates-pref-clean-duration = ({ $ms } ms)
zocrates-pref-vacuum-below-threshold = zu wenig freier Platz, als dass sich das Verdichten lohnt
zocrates-pref-vacuum-chat-in-progress = ein Chat läuft gerade
zocrates-pref-vacuum-insufficient-disk = zu wenig freier Speicherplatz auf dem Datenträger
zocrates-pref-vacuum-database-busy = die Datenbank ist belegt
zocrates-pref-vacuum-failed = das Verdichten ist fehlgeschlagen (die Datenbank ist unverändert)
