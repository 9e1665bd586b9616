package crosswalk

// Namespaces of the output (GW-J2J-20, [XSD2]) and of the junii2 dialects
// (J2E-01, J2E-02).
const (
	nsJPCOAR   = "https://github.com/JPCOAR/schema/blob/master/2.0/"
	nsDC       = "http://purl.org/dc/elements/1.1/"
	nsDCTerms  = "http://purl.org/dc/terms/"
	nsDatacite = "https://schema.datacite.org/meta/kernel-4/"
	nsOAIRE    = "http://namespace.openaire.eu/schema/oaire/"
	nsDCNDL    = "http://ndl.go.jp/dcndl/terms/"
	nsRDF      = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
	nsXML      = "http://www.w3.org/XML/1998/namespace"

	nsJunii2       = "http://irdb.nii.ac.jp/oai"
	nsJunii2Legacy = "http://ju.nii.ac.jp/junii2"
	nsTulips       = "http://irdb.nii.ac.jp/dspace-oai"

	coarType    = "http://purl.org/coar/resource_type/"
	coarVersion = "http://purl.org/coar/version/"
	coarAccess  = "http://purl.org/coar/access_right/"
)

// resType is a dc:type value: the COAR label and its rdf:resource.
type resType struct{ label, uri string }

// niiTypes is §D.1: NIItype → canonical COAR resource type. departmental
// bulletin paper and article carry the journal article URI c_6501, as
// [X2 r58] N prescribes. Thesis or Dissertation is refined by GW-J2J-18 in
// thesisType.
var niiTypes = map[string]resType{
	"Journal Article":             {"journal article", coarType + "c_6501"},
	"Thesis or Dissertation":      {"thesis", coarType + "c_46ec"},
	"Departmental Bulletin Paper": {"departmental bulletin paper", coarType + "c_6501"},
	"Conference Paper":            {"conference paper", coarType + "c_5794"},
	"Presentation":                {"conference output", coarType + "c_c94f"},
	"Book":                        {"book", coarType + "c_2f33"},
	"Technical Report":            {"technical report", coarType + "c_18gh"},
	"Research Paper":              {"research report", coarType + "c_18ws"},
	"Article":                     {"article", coarType + "c_6501"},
	"Preprint":                    {"other", coarType + "c_1843"},
	"Learning Material":           {"learning object", coarType + "c_e059"},
	"Data or Dataset":             {"dataset", coarType + "c_ddb1"},
	"Software":                    {"software", coarType + "c_5ce6"},
	"Others":                      {"other", coarType + "c_1843"},
}

// doctoralThesis is GW-J2J-18's refinement of Thesis or Dissertation.
var doctoralThesis = resType{"doctoral thesis", coarType + "c_db06"}

// versions is §D.2 ([INF]): textversion (lower-cased) → oaire:version.
// none maps to nothing; so does an unknown value (warning textversion-unknown).
var versions = map[string]resType{
	"publisher": {"VoR", coarVersion + "c_970fb48d4fbd8a85"},
	"author":    {"AM", coarVersion + "c_ab4af688f83e57aa"},
	"etd":       {"VoR", coarVersion + "c_970fb48d4fbd8a85"},
}

// coarVersions maps every oaire:version label to its URI, for the JCV check
// that label and URI agree (J2V-05).
var coarVersions = map[string]string{
	"AO":   coarVersion + "c_b1a7d7d4d402bcce",
	"SMUR": coarVersion + "c_71e4c1898caa6e32",
	"AM":   coarVersion + "c_ab4af688f83e57aa",
	"P":    coarVersion + "c_fa2ee174bc00049f",
	"VoR":  coarVersion + "c_970fb48d4fbd8a85",
	"CVoR": coarVersion + "c_e19f295774971610",
	"EVoR": coarVersion + "c_dc82b40f9837b551",
	"NA":   coarVersion + "c_be7fb7dd8ff6fe43",
}

// relationElements are the 12 junii2 relation elements; each name is also
// the JPCOAR relationType ([X2 r67], J2M-024).
var relationElements = map[string]bool{
	"isVersionOf": true, "hasVersion": true, "isReplacedBy": true, "replaces": true,
	"isRequiredBy": true, "requires": true, "isPartOf": true, "hasPart": true,
	"isReferencedBy": true, "references": true, "isFormatOf": true, "hasFormat": true,
}

// classElements are the junii2 classification and heading elements; the
// value says whether it is a heading (text with xml:lang) rather than a code
// (J2M-010). Each name is also the JPCOAR subjectScheme.
var classElements = map[string]bool{
	"NDC": false, "NDLC": false, "DDC": false, "LCC": false, "UDC": false,
	"BSH": true, "NDLSH": true, "MeSH": true, "LCSH": true,
}

// singleElements are the junii2 0..1 elements of GW-J2J-05: the first
// occurrence wins, the others produce `repeated:<element>`.
var singleElements = map[string]bool{
	"jtitle": true, "volume": true, "issue": true, "spage": true, "epage": true,
	"dateofissued": true, "pmid": true, "doi": true, "selfDOI": true, "NAID": true,
	"ichushi": true, "textversion": true, "grantid": true, "dateofgranted": true,
	"degreename": true, "grantor": true,
}

// knownElements lists every junii2 3.1 element (§A.2) plus the IRDB
// extensions baseurl and IR_URI (J2E-05ap). Anything else is dropped with
// `unknown-element:<name>` (GW-J2J-19).
var knownElements = map[string]bool{
	"title": true, "alternative": true, "creator": true, "subject": true, "NIIsubject": true,
	"NDC": true, "NDLC": true, "BSH": true, "NDLSH": true, "MeSH": true, "DDC": true,
	"LCC": true, "UDC": true, "LCSH": true, "description": true, "publisher": true,
	"contributor": true, "date": true, "type": true, "NIItype": true, "format": true,
	"identifier": true, "URI": true, "fullTextURL": true, "selfDOI": true, "isbn": true,
	"issn": true, "NCID": true, "jtitle": true, "volume": true, "issue": true,
	"spage": true, "epage": true, "dateofissued": true, "source": true, "language": true,
	"relation": true, "pmid": true, "doi": true, "NAID": true, "ichushi": true,
	"isVersionOf": true, "hasVersion": true, "isReplacedBy": true, "replaces": true,
	"isRequiredBy": true, "requires": true, "isPartOf": true, "hasPart": true,
	"isReferencedBy": true, "references": true, "isFormatOf": true, "hasFormat": true,
	"coverage": true, "spatial": true, "NIIspatial": true, "temporal": true,
	"NIItemporal": true, "rights": true, "textversion": true, "grantid": true,
	"dateofgranted": true, "degreename": true, "grantor": true,
	"baseurl": true, "IR_URI": true,
}

// registrationAgencies is J2M-023: selfDOI@ra (lower-cased) →
// identifierRegistration@identifierType. [W2] writes CrossRef (D-J2J-02).
var registrationAgencies = map[string]string{
	"jalc": "JaLC", "crossref": "Crossref", "datacite": "DataCite",
}

// niiSubjects is the NII metadata subject vocabulary as [JV] lists it
// (J2E-05e, J2V-16); a value outside it is a [JV] error.
var niiSubjects = map[string]bool{
	"全般": true, "人文科学": true, "哲学・倫理学": true, "宗教": true, "心理学": true,
	"美学・芸術学": true, "歴史学": true, "考古学": true, "民族学": true, "文化人類学・民俗学": true,
	"地理学・地誌": true, "言語学": true, "文学": true, "社会科学": true, "政治・行政": true,
	"法律・法律学": true, "経済学": true, "ビジネス・経営・産業": true, "社会・文化": true,
	"教育・教育学": true, "軍事": true, "運輸・交通": true, "環境学": true,
	"メディア・コミュニケーション": true, "厚生・福祉": true, "芸術": true, "建築学": true,
	"美術": true, "音楽": true, "演劇": true, "映画・テレビ": true, "諸芸": true, "漫画": true,
	"自然科学": true, "数学": true, "物理学": true, "化学": true, "天文学": true,
	"地球惑星科学": true, "生物学": true, "自然人類学": true, "生命科学": true, "医学": true,
	"基礎医学": true, "社会医学": true, "内科系臨床医学": true, "外科系臨床医学": true,
	"歯学": true, "薬学": true, "看護学": true, "獣医学": true, "ゲノム科学": true, "農学": true,
	"農芸化学": true, "林学": true, "水産学": true, "農業工学": true, "畜産学": true, "工学": true,
	"基礎工学・応用物理学": true, "機械工学": true, "電気電子工学": true, "土木工学": true,
	"材料工学": true, "プロセス工学・化学工学": true, "航空工学": true, "船舶・海洋工学": true,
	"エネルギー工学": true, "ナノテクノロジー": true, "情報学": true,
	"情報・メディア・コミュニケーション": true, "家政学・生活科学": true, "習俗": true,
	"趣味・娯楽": true, "生活・家庭": true, "健康・スポーツ科学": true,
}

// niiSpatial is the NII regional vocabulary as [JV] lists it (J2E-05ah,
// J2V-18); a value outside it is a [JV] warning.
var niiSpatial = map[string]bool{
	"日本": true, "北海道": true, "東北": true, "青森": true, "岩手": true, "宮城": true,
	"秋田": true, "山形": true, "福島": true, "関東": true, "茨城": true, "栃木": true,
	"群馬": true, "埼玉": true, "千葉": true, "東京": true, "神奈川": true, "北陸": true,
	"新潟": true, "富山": true, "石川": true, "福井": true, "中部": true, "山梨": true,
	"長野": true, "岐阜": true, "静岡": true, "愛知": true, "三重": true, "近畿": true,
	"滋賀": true, "京都": true, "大阪": true, "兵庫": true, "奈良": true, "和歌山": true,
	"中国": true, "鳥取": true, "島根": true, "岡山": true, "広島": true, "山口": true,
	"四国": true, "徳島": true, "香川": true, "愛媛": true, "高知": true, "九州": true,
	"福岡": true, "佐賀": true, "長崎": true, "熊本": true, "大分": true, "宮崎": true,
	"鹿児島": true, "沖縄": true, "海外": true, "アジア": true, "東アジア": true,
	"東南アジア": true, "南アジア": true, "中東地域": true, "朝鮮半島": true,
	"環太平洋地域": true, "中華人民共和国": true, "韓国": true, "タイ": true, "インド": true,
	"インドネシア": true, "ベトナム": true, "モンゴル": true, "ネパール": true,
	"フィリピン": true, "台湾": true, "バングラデシュ": true, "ミャンマー": true,
	"マレーシア": true, "シンガポール": true, "イラン": true, "シリア": true,
	"ヨーロッパ": true, "西欧": true, "東欧": true, "イギリス": true, "ドイツ": true,
	"フランス": true, "ロシア": true, "ギリシャ": true, "イタリア": true,
	"スウェーデン": true, "スペイン": true, "ポーランド": true, "アフリカ": true,
	"エジプト": true, "北米": true, "アメリカ合衆国": true, "ブラジル": true,
	"中南米": true, "メキシコ": true, "オセアニア": true, "オーストラリア": true,
	"南極・北極": true, "海洋・宇宙": true,
}

// resourceTypeLabels is the 74-term dc:type enumeration of [XSD2]
// (jpcoar:resourceTypeVocab), for CheckJPCOAR (J2V-02).
var resourceTypeLabels = map[string]bool{
	"conference paper": true, "data paper": true, "departmental bulletin paper": true,
	"editorial": true, "journal": true, "journal article": true, "newspaper": true,
	"review article": true, "other periodical": true, "software paper": true, "article": true,
	"book": true, "book part": true, "cartographic material": true, "map": true,
	"conference output": true, "conference presentation": true, "conference proceedings": true,
	"conference poster": true, "aggregated data": true, "clinical trial data": true,
	"compiled data": true, "dataset": true, "encoded data": true, "experimental data": true,
	"genomic data": true, "geospatial data": true, "laboratory notebook": true,
	"measurement and test data": true, "observational data": true, "recorded data": true,
	"simulation data": true, "survey data": true, "image": true, "still image": true,
	"moving image": true, "video": true, "lecture": true, "design patent": true, "patent": true,
	"PCT application": true, "plant patent": true, "plant variety protection": true,
	"software patent": true, "trademark": true, "utility model": true, "report": true,
	"research report": true, "technical report": true, "policy report": true,
	"working paper": true, "data management plan": true, "sound": true, "thesis": true,
	"bachelor thesis": true, "master thesis": true, "doctoral thesis": true,
	"commentary": true, "design": true, "industrial design": true,
	"interactive resource": true, "layout design": true, "learning object": true,
	"manuscript": true, "musical notation": true, "peer review": true,
	"research proposal": true, "research protocol": true, "software": true,
	"source code": true, "technical documentation": true, "transcription": true,
	"workflow": true, "other": true,
}

// thesisTypes are the dc:type labels for which IRDB requires a creator (J2V-04).
var thesisTypes = map[string]bool{
	"thesis": true, "bachelor thesis": true, "master thesis": true, "doctoral thesis": true,
}
